//! Cron schedules as the config writes them: 5 fields, or 6 with seconds first.
//!
//! Only validated here (field count, syntax, ranges); the daemon's scheduler does the timing.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A validated cron expression, kept as written.
///
/// Fields: `[second] minute hour day-of-month month day-of-week`. Each field is a comma list of
/// `*`, `N`, `N-M`, each optionally `/STEP`; months and weekdays also take names (`jan`, `mon`);
/// `?` is accepted for the two day fields; weekday 7 is Sunday, like 0. A bare `*` or `?` stands
/// alone in its field (the daemon's scheduler rejects `1,*`); a test holds every form accepted
/// here to the scheduler's parser.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CronSchedule(String);

/// One field's name and bounds.
struct Field {
    name: &'static str,
    min: u32,
    max: u32,
    /// Names for values, the first meaning `min`.
    names: &'static [&'static str],
    question_mark: bool,
}

const SECOND: Field = Field {
    name: "second",
    min: 0,
    max: 59,
    names: &[],
    question_mark: false,
};
const MINUTE: Field = Field {
    name: "minute",
    min: 0,
    max: 59,
    names: &[],
    question_mark: false,
};
const HOUR: Field = Field {
    name: "hour",
    min: 0,
    max: 23,
    names: &[],
    question_mark: false,
};
const DAY: Field = Field {
    name: "day-of-month",
    min: 1,
    max: 31,
    names: &[],
    question_mark: true,
};
const MONTH: Field = Field {
    name: "month",
    min: 1,
    max: 12,
    names: &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ],
    question_mark: false,
};
const WEEKDAY: Field = Field {
    name: "day-of-week",
    min: 0,
    max: 7,
    names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    question_mark: true,
};

impl CronSchedule {
    /// Every minute: the config's default `schedule`.
    pub fn every_minute() -> Self {
        CronSchedule("*/1 * * * *".to_owned())
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 6-field form (seconds first), for schedulers that want seconds: a 5-field expression
    /// gains a leading `0`.
    pub fn with_seconds(&self) -> String {
        let fields: Vec<&str> = self.0.split_whitespace().collect();
        if fields.len() == 5 {
            format!("0 {}", fields.join(" "))
        } else {
            fields.join(" ")
        }
    }
}

impl Default for CronSchedule {
    fn default() -> Self {
        CronSchedule::every_minute()
    }
}

impl fmt::Display for CronSchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for CronSchedule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let fields: Vec<&str> = s.split_whitespace().collect();
        let layout: &[&Field] = match fields.len() {
            5 => &[&MINUTE, &HOUR, &DAY, &MONTH, &WEEKDAY],
            6 => &[&SECOND, &MINUTE, &HOUR, &DAY, &MONTH, &WEEKDAY],
            n => {
                return Err(format!(
                    "`{s}` has {n} field{}; a schedule has 5 (minute hour day-of-month month \
                     day-of-week) or 6 with seconds first",
                    if n == 1 { "" } else { "s" }
                ));
            }
        };
        for (text, field) in fields.iter().zip(layout) {
            check_field(text, field)
                .map_err(|why| format!("`{s}`: {} field `{text}`: {why}", field.name))?;
        }
        Ok(CronSchedule(s.trim().to_owned()))
    }
}

fn check_field(text: &str, field: &Field) -> Result<(), String> {
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (item, None),
        };
        if let Some(step) = step {
            match step.parse::<u32>() {
                Ok(n) if n >= 1 && n <= field.max.max(1) => {}
                _ => {
                    return Err(format!(
                        "step `{step}` must be a number from 1 to {}",
                        field.max
                    ));
                }
            }
        }
        if matches!(item, "*" | "?") && text.contains(',') {
            return Err(format!(
                "`{item}` stands alone; it cannot be one item of a list"
            ));
        }
        match range {
            "*" => {}
            "?" if field.question_mark && step.is_none() => {}
            _ => match range.split_once('-') {
                Some((lo, hi)) => {
                    let (lo, hi) = (value(lo, field)?, value(hi, field)?);
                    if lo > hi {
                        return Err(format!("range `{range}` runs backwards"));
                    }
                }
                None => {
                    value(range, field)?;
                }
            },
        }
    }
    Ok(())
}

fn value(text: &str, field: &Field) -> Result<u32, String> {
    if let Some(i) = field
        .names
        .iter()
        .position(|n| n.eq_ignore_ascii_case(text))
    {
        return Ok(field.min + u32::try_from(i).map_err(|e| e.to_string())?);
    }
    match text.parse::<u32>() {
        Ok(v) if (field.min..=field.max).contains(&v) => Ok(v),
        Ok(v) => Err(format!("{v} is out of range {}-{}", field.min, field.max)),
        Err(_) if text.is_empty() => Err("an item is empty".to_owned()),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

impl<'de> Deserialize<'de> for CronSchedule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = CronSchedule;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a cron schedule such as \"*/1 * * * *\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CronSchedule, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

impl Serialize for CronSchedule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the daemon's scheduler takes `expr` (6 fields, seconds first), as
    /// `commands::schedule` hands it over.
    fn scheduler_accepts(expr: &str) -> bool {
        tokio_cron_scheduler::Job::new(expr, |_, _| {}).is_ok()
    }

    /// Items to try in `field`: the bounds and one past them, ranges both ways, steps, names in
    /// both cases, `?`, lists, and forms other crons know (`L`, `#`, `W`).
    fn candidates(field: &Field) -> Vec<String> {
        let (lo, hi) = (field.min, field.max);
        let mut out: Vec<String> = [
            "*", "?", "*/1", "*/2", "?/2", "", "x", "L", "1#2", "15W", "1-", "-1", "*/0", "*/x",
            "1,,2", "1,*", "*,1", "1,*/5", "*/5,1", "?,1", "1-2,*/3",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        for v in [lo, hi, hi + 1, lo + 1] {
            out.push(v.to_string());
            out.push(format!("{v}/2"));
            out.push(format!("*/{v}"));
        }
        if lo > 0 {
            out.push((lo - 1).to_string());
        }
        out.extend([
            format!("{lo}-{hi}"),
            format!("{hi}-{lo}"),
            format!("{lo}-{hi}/3"),
            format!("{lo},{hi}"),
            format!("{lo}-{},{hi}", lo + 1),
            format!("{lo}-{}", hi + 1),
        ]);
        for name in field.names {
            out.push((*name).to_owned());
            out.push(name.to_ascii_uppercase());
        }
        if let [first, .., last] = field.names {
            out.push(format!("{first}-{last}"));
            out.push(format!("{last}-{first}"));
            out.push(format!("{first},{last}"));
            out.push(format!("{first}-{last}/2"));
        }
        out
    }

    #[test]
    fn every_schedule_the_config_accepts_the_scheduler_accepts() {
        let (mut accepted, mut disagree) = (0, Vec::new());
        for layout in [
            &[&MINUTE, &HOUR, &DAY, &MONTH, &WEEKDAY][..],
            &[&SECOND, &MINUTE, &HOUR, &DAY, &MONTH, &WEEKDAY][..],
        ] {
            for (at, field) in layout.iter().enumerate() {
                for item in candidates(field) {
                    for filler in ["*", "?"] {
                        let expr: Vec<String> = layout
                            .iter()
                            .enumerate()
                            .map(|(i, f)| match i {
                                _ if i == at => item.clone(),
                                _ if f.question_mark => filler.to_owned(),
                                _ => "*".to_owned(),
                            })
                            .collect();
                        let expr = expr.join(" ");
                        if let Ok(cron) = expr.parse::<CronSchedule>() {
                            accepted += 1;
                            if !scheduler_accepts(&cron.with_seconds()) {
                                disagree.push(expr);
                            }
                        }
                    }
                }
            }
        }
        assert!(
            disagree.is_empty(),
            "the config check passes these but the scheduler rejects them: {disagree:#?}"
        );
        assert!(
            accepted > 300,
            "only {accepted} accepted: the table is too thin"
        );
    }

    #[test]
    fn typical_schedules_pass_both_the_config_and_the_scheduler() {
        for expr in [
            "* * * * *",
            "*/1 * * * *",
            "*/5 * * * *",
            "0 * * * *",
            "15,45 * * * *",
            "0 9-17 * * mon-fri",
            "0 9-17 * * MON-FRI",
            "*/10 8-18 * * 1-5",
            "30 2 1,15 * *",
            "0 0 1 jan *",
            "0 0 ? * sun",
            "0 0 * * 0",
            "0 0 * * 7",
            "0 12 * * sat,sun",
            "*/30 * * * * *",
            "0 */2 * * * *",
            "0 0 9 * * mon-fri",
            "5/15 * * * *",
        ] {
            let cron: CronSchedule = expr.parse().unwrap_or_else(|e| panic!("{expr}: {e}"));
            assert!(
                scheduler_accepts(&cron.with_seconds()),
                "the scheduler rejects `{}`",
                cron.with_seconds()
            );
        }
    }

    #[test]
    fn accepts_common_schedules() {
        for ok in [
            "*/1 * * * *",
            "*/2 * * * *",
            "0 9-17 * * mon-fri",
            "30 2 1,15 * *",
            "0 0 ? JAN SUN",
            "*/10 * * * * *",
            "0 */5 * * * *",
            "5/15 * * * *",
            "0 0 * * 7",
            "  */1   *  * * *  ",
        ] {
            assert!(
                ok.parse::<CronSchedule>().is_ok(),
                "{ok}: {:?}",
                ok.parse::<CronSchedule>()
            );
        }
    }

    #[test]
    fn rejects_bad_schedules_saying_why() {
        let cases = [
            ("* * * *", "has 4 fields"),
            ("", "has 0 fields"),
            ("* * * * * * *", "has 7 fields"),
            ("60 * * * *", "minute field `60`: 60 is out of range 0-59"),
            ("* 24 * * *", "hour field `24`: 24 is out of range 0-23"),
            (
                "* * 0 * *",
                "day-of-month field `0`: 0 is out of range 1-31",
            ),
            ("* * * 13 *", "month field `13`"),
            ("* * * * 8", "day-of-week field `8`"),
            ("*/0 * * * *", "step `0`"),
            ("*/x * * * *", "step `x`"),
            ("5-1 * * * *", "runs backwards"),
            ("a * * * *", "`a` is not a number"),
            ("1,,2 * * * *", "an item is empty"),
            ("? * * * *", "minute field `?`"),
            ("61 * * * * *", "second field `61`"),
            ("@hourly", "has 1 field;"),
            ("1,* * * * *", "`*` stands alone"),
            ("* * * * ?,1", "`?` stands alone"),
        ];
        for (input, want) in cases {
            let err = input.parse::<CronSchedule>().unwrap_err();
            assert!(err.contains(want), "{input}: {err}");
        }
    }

    #[test]
    fn six_field_form() {
        let five: CronSchedule = "*/1 * * * *".parse().unwrap();
        assert_eq!(five.with_seconds(), "0 */1 * * * *");
        let six: CronSchedule = "*/10 * * * * *".parse().unwrap();
        assert_eq!(six.with_seconds(), "*/10 * * * * *");
        assert_eq!(CronSchedule::default().as_str(), "*/1 * * * *");
    }
}
