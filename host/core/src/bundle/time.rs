//! Times in bundles and trust files: Unix seconds (UTC) in the manifest, and the
//! `YYYYMMDD[HHMM[SS]][Z]` form of `allowed_signers` `valid-after=`/`valid-before=`.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch now.
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Parses an `allowed_signers` time: `YYYYMMDD`, `YYYYMMDDHHMM` or `YYYYMMDDHHMMSS`, with an
/// optional trailing `Z`. Guild reads every such time as UTC (ssh-keygen reads a time without
/// `Z` as local time: write the `Z` to mean the same in both).
pub fn parse_signers_time(text: &str) -> Result<u64, String> {
    let digits = text.strip_suffix(['Z', 'z']).unwrap_or(text);
    let bad = || format!("{text:?} is not a time: expected YYYYMMDD[HHMM[SS]][Z]");
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| digits.get(r).and_then(|s| s.parse::<u32>().ok());
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(4..6), num(6..8)) else {
        return Err(bad());
    };
    let hh = num(8..10).unwrap_or(0);
    let mm = num(10..12).unwrap_or(0);
    let ss = num(12..14).unwrap_or(0);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 59 {
        return Err(bad());
    }
    let days = days_from_civil(i64::from(y), m, d);
    let secs = days * 86_400 + i64::from(hh * 3600 + mm * 60 + ss);
    u64::try_from(secs).map_err(|_| bad())
}

/// Formats Unix seconds as RFC 3339 (UTC), for people.
pub fn rfc3339(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signers_times_round_trip_through_rfc3339() {
        assert_eq!(parse_signers_time("19700101"), Ok(0));
        let t = parse_signers_time("20261201123456Z").expect("parses");
        assert_eq!(rfc3339(t), "2026-12-01T12:34:56Z");
        assert_eq!(
            rfc3339(parse_signers_time("202402291200").expect("leap day")),
            "2024-02-29T12:00:00Z"
        );
        for bad in ["2026", "2026120", "20261301", "2026120125", "abcdefgh", ""] {
            assert!(parse_signers_time(bad).is_err(), "{bad} accepted");
        }
    }
}
