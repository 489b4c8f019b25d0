//! The status page's colours, light and dark, as data: every pill and chip is a foreground on a
//! background, every text a colour on the page. The CSS is generated from these tables, and a
//! test computes the WCAG contrast of every pair (at least 4.5:1), so a colour cannot drift
//! below AA unnoticed. `ci` and `cnf` differ in hue as well as in word.

/// A foreground on a background, as `#rrggbb`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub fg: &'static str,
    pub bg: &'static str,
}

/// A CSS class and its colours in the light and the dark scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swatch {
    pub class: &'static str,
    pub light: Pair,
    pub dark: Pair,
}

const fn pair(fg: &'static str, bg: &'static str) -> Pair {
    Pair { fg, bg }
}

/// The page itself.
pub const PAGE: Swatch = Swatch {
    class: "page",
    light: pair("#1b1b1f", "#ffffff"),
    dark: pair("#e6e6ea", "#16161a"),
};

/// Pills (`ci`, `ci…`, `cnf`, `cmt`) and chip tones (`good`, `bad`, `busy`, `quiet`).
pub const SWATCHES: [Swatch; 8] = [
    Swatch {
        class: "ci",
        light: pair("#ffffff", "#b3261e"),
        dark: pair("#2b0300", "#ff8a80"),
    },
    Swatch {
        class: "fixing",
        light: pair("#ffffff", "#0b57a4"),
        dark: pair("#001a33", "#8fc3ff"),
    },
    Swatch {
        class: "cnf",
        light: pair("#ffffff", "#6b2c91"),
        dark: pair("#24003a", "#d7a6f5"),
    },
    Swatch {
        class: "cmt",
        light: pair("#3a2c00", "#ffd54f"),
        dark: pair("#2a2000", "#ffe082"),
    },
    Swatch {
        class: "good",
        light: pair("#14532d", "#dcf5e3"),
        dark: pair("#b7f0c8", "#12351f"),
    },
    Swatch {
        class: "bad",
        light: pair("#8c1d18", "#fde4e2"),
        dark: pair("#ffc9c4", "#4a1512"),
    },
    Swatch {
        class: "busy",
        light: pair("#0b4a8a", "#e1efff"),
        dark: pair("#c4defc", "#10304f"),
    },
    Swatch {
        class: "quiet",
        light: pair("#44444c", "#ececf0"),
        dark: pair("#d0d0d8", "#2c2c33"),
    },
];

/// Text colours on the page: muted text, links, errors.
pub const TEXTS: [Swatch; 3] = [
    Swatch {
        class: "muted",
        light: pair("#55555e", "#ffffff"),
        dark: pair("#a9a9b3", "#16161a"),
    },
    Swatch {
        class: "link",
        light: pair("#0b57a4", "#ffffff"),
        dark: pair("#8fc3ff", "#16161a"),
    },
    Swatch {
        class: "err",
        light: pair("#b3261e", "#ffffff"),
        dark: pair("#ff8a80", "#16161a"),
    },
];

fn channel(hex: &str, at: usize) -> f64 {
    let v = u8::from_str_radix(hex.get(at..at + 2).unwrap_or("00"), 16).unwrap_or(0);
    let c = f64::from(v) / 255.0;
    if c <= 0.039_28 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// WCAG relative luminance of `#rrggbb`.
pub fn luminance(hex: &str) -> f64 {
    let h = hex.trim_start_matches('#');
    0.2126 * channel(h, 0) + 0.7152 * channel(h, 2) + 0.0722 * channel(h, 4)
}

/// WCAG contrast ratio of two colours (1 to 21).
pub fn contrast(a: &str, b: &str) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

/// The colour rules: custom properties for both schemes, the dark ones under
/// `prefers-color-scheme: dark`.
pub fn css() -> String {
    let vars = |dark: bool| {
        let pick = |s: &Swatch| if dark { s.dark } else { s.light };
        let mut out = format!("--fg:{};--bg:{};", pick(&PAGE).fg, pick(&PAGE).bg);
        for s in &SWATCHES {
            out.push_str(&format!(
                "--{c}-fg:{};--{c}-bg:{};",
                pick(s).fg,
                pick(s).bg,
                c = s.class
            ));
        }
        for s in &TEXTS {
            out.push_str(&format!("--{}:{};", s.class, pick(s).fg));
        }
        out
    };
    let mut css = format!(
        ":root{{color-scheme:light dark;{}}}\n@media (prefers-color-scheme: dark){{:root{{{}}}}}\n",
        vars(false),
        vars(true)
    );
    for s in &SWATCHES {
        css.push_str(&format!(
            ".{c}{{color:var(--{c}-fg);background:var(--{c}-bg)}}\n",
            c = s.class
        ));
    }
    css
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_colour_pair_meets_aa_contrast_in_both_schemes() {
        let all = SWATCHES.iter().chain(TEXTS.iter()).chain([&PAGE]);
        for s in all {
            for (scheme, p) in [("light", s.light), ("dark", s.dark)] {
                let ratio = contrast(p.fg, p.bg);
                assert!(
                    ratio >= 4.5,
                    "{} ({scheme}): {} on {} is {ratio:.2}:1",
                    s.class,
                    p.fg,
                    p.bg
                );
            }
        }
        // The pills also stand on the page: their background differs from it.
        for s in &SWATCHES[..4] {
            assert_ne!(s.light.bg, PAGE.light.bg);
            assert_ne!(s.dark.bg, PAGE.dark.bg);
        }
    }

    #[test]
    fn ci_and_cnf_do_not_share_a_colour() {
        let ci = SWATCHES[0];
        let cnf = SWATCHES[2];
        assert_ne!(ci.light.bg, cnf.light.bg);
        assert_ne!(ci.dark.bg, cnf.dark.bg);
    }

    #[test]
    fn contrast_matches_known_values() {
        assert!((contrast("#000000", "#ffffff") - 21.0).abs() < 0.01);
        assert!((contrast("#ffffff", "#ffffff") - 1.0).abs() < 0.01);
        // The old page's white on yellow.
        assert!(contrast("#ffffff", "#f9a825") < 2.0);
    }
}
