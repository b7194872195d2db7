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
    let days = guild_core::calendar::days_from_civil(i64::from(y), m, d);
    let secs = days * 86_400 + i64::from(hh * 3600 + mm * 60 + ss);
    u64::try_from(secs).map_err(|_| bad())
}

/// Formats Unix seconds as RFC 3339 (UTC), for people.
pub fn rfc3339(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let (y, m, d) = guild_core::calendar::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
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
