//! How the protocol compares text: the same words are the same criterion or constraint,
//! whatever the spacing or case, so a child cannot "drop" a constraint by re-spacing it and the
//! anchor's hash does not change with a re-flowed line.

/// Trimmed, inner whitespace collapsed to one space, lowercased.
pub(crate) fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Checks one field's text: non-empty after trimming, at most `max` characters.
pub(crate) fn check_field(field: &str, value: &str, max: usize) -> Result<(), String> {
    let chars = value.trim().chars().count();
    if chars == 0 {
        return Err(format!("`{field}` is empty"));
    }
    if chars > max {
        return Err(format!(
            "`{field}` has {chars} characters, over the limit of {max}"
        ));
    }
    Ok(())
}

/// Checks a list field: at least `min`, at most `max` items, each a checked field.
pub(crate) fn check_list(
    field: &str,
    items: &[String],
    min: usize,
    max: usize,
    max_chars: usize,
) -> Result<(), String> {
    if items.len() < min {
        return Err(format!(
            "`{field}` needs at least {min} item(s), it has {}",
            items.len()
        ));
    }
    if items.len() > max {
        return Err(format!(
            "`{field}` has {} items, over the limit of {max}",
            items.len()
        ));
    }
    for (i, item) in items.iter().enumerate() {
        check_field(&format!("{field}[{i}]"), item, max_chars)?;
    }
    Ok(())
}
