//! The status page in a real headless Chromium, measured from the DOM: at 390 px (a phone) and
//! 1280 px (a desktop), light and dark, every PR's chip and why are visible inside the
//! viewport with nothing scrolling sideways; a hostile title is shown as text; the page makes
//! no network request, logs no console error and runs nothing; every pill and chip colour pair
//! as rendered has at least 4.5:1 contrast.

use serde_json::Value;

use crate::support::chromium::Chromium;
use crate::support::env::TestEnv;

const HOSTILE: &str = "<script>alert(1)</script><img src=x onerror=alert(2)> & \"quotes\"";

const MEASURE: &str = r"(() => {
  const vw = window.innerWidth;
  const seen = el => {
    if (!el) return false;
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && r.left >= -0.5 && r.right <= vw + 0.5
      && s.visibility !== 'hidden' && s.display !== 'none' && parseFloat(s.fontSize) >= 12;
  };
  const cards = [...document.querySelectorAll('li.pr')].map(li => ({
    chip: li.querySelector('.chip') && li.querySelector('.chip').textContent,
    chipSeen: seen(li.querySelector('.chip')),
    why: li.querySelector('.why') && li.querySelector('.why').textContent,
    whySeen: seen(li.querySelector('.why')),
    title: li.querySelector('.title') && li.querySelector('.title').textContent,
  }));
  const colours = [...document.querySelectorAll('.pill, .chip')].map(el => {
    const s = getComputedStyle(el);
    return [el.className, s.color, s.backgroundColor];
  });
  return { vw, scrollWidth: document.documentElement.scrollWidth, cards, colours,
           scripts: document.querySelectorAll('script, iframe, object, embed').length,
           summary: document.querySelector('.summary').textContent };
})()";

/// `rgb(1, 2, 3)` → `#010203`.
fn hex(css: &str) -> String {
    let inner = css
        .trim_start_matches("rgba(")
        .trim_start_matches("rgb(")
        .trim_end_matches(')');
    let parts: Vec<u8> = inner
        .split(',')
        .take(3)
        .map(|p| p.trim().parse().expect("a channel"))
        .collect();
    format!("#{:02x}{:02x}{:02x}", parts[0], parts[1], parts[2])
}

fn page_env() -> TestEnv {
    let env = TestEnv::with_config("report:\n  html_path: out/status.html\n");
    env.gh.world(|w| {
        w.pr("octo/app", 1)
            .title(HOSTILE)
            .head_commit(|c| c.by("human"));
        w.check_run("octo/app", 1, "lint").failure();
        w.pr("octo/app", 2)
            .title("A conflicting change")
            .conflicting();
        w.pr("octo/app", 3).title("Reviewers have questions");
        w.thread("octo/app", 3).unresolved();
        w.pr("octo/app", 4).title("Already merged").merged();
        w.pr("octo/app", 5)
            .title(&"A very long title that wraps ".repeat(12));
        w.check_run("octo/app", 5, "test").success();
    });
    for n in 1..=5 {
        env.ok(&["watch", "add", &format!("octo/app#{n}")]);
    }
    env.ok(&["run"]);
    env
}

#[test]
fn the_status_page_reads_on_a_phone_and_a_desktop_in_light_and_dark() {
    let Some(mut browser) = Chromium::start() else {
        crate::support::tools::missing(
            "no Chromium is installed (`.ci/run` installs Debian's chromium)",
        );
        return;
    };
    let env = page_env();
    let path = env.dir.path().join("out/status.html");
    let url = format!("file://{}", path.display());
    for scheme in ["light", "dark"] {
        browser.call(
            "Emulation.setEmulatedMedia",
            serde_json::json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        );
        for width in [390, 1280] {
            browser.load(&url, width, 844);
            let m = browser.eval(MEASURE);
            let at = format!("{scheme} at {width}px");
            assert_eq!(m["vw"], width, "{at}");
            assert!(
                m["scrollWidth"].as_u64() <= m["vw"].as_u64(),
                "{at}: scrolls sideways: {m}"
            );
            let cards = m["cards"].as_array().expect("cards");
            assert_eq!(cards.len(), 5, "{at}: {m}");
            for card in cards {
                assert_eq!(card["chipSeen"], true, "{at}: chip hidden: {card}");
                assert_eq!(card["whySeen"], true, "{at}: why hidden: {card}");
                assert!(
                    card["why"].as_str().is_some_and(|w| w.len() > 5),
                    "{at}: {card}"
                );
            }
            let chips: Vec<&str> = cards.iter().filter_map(|c| c["chip"].as_str()).collect();
            assert_eq!(
                chips[0], "PR #1 ✗ 1 failing",
                "{at}: needs first: {chips:?}"
            );
            assert!(chips.contains(&"PR #2 ⚠ conflicts"), "{chips:?}");
            assert_eq!(chips[4], "PR #4 merged", "{at}: {chips:?}");
            assert_eq!(
                cards[0]["title"], HOSTILE,
                "{at}: the hostile title is text"
            );
            assert_eq!(m["scripts"], 0, "{at}");
            for c in m["colours"].as_array().expect("colours") {
                let (fg, bg) = (hex(c[1].as_str().unwrap()), hex(c[2].as_str().unwrap()));
                let ratio = pr_monitor::view::palette::contrast(&fg, &bg);
                assert!(ratio >= 4.5, "{at}: {c} has {ratio:.2}:1");
            }
        }
    }
    let requests: Vec<&Value> = browser.events_of("Network.requestWillBeSent");
    for r in &requests {
        assert_eq!(
            r["params"]["request"]["url"],
            url.as_str(),
            "the page fetched something: {r}"
        );
    }
    assert!(browser.events_of("Runtime.exceptionThrown").is_empty());
    let errors: Vec<&Value> = browser
        .events
        .iter()
        .filter(|e| {
            (e["method"] == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
                || (e["method"] == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
        })
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}
