//! The kb brief language: parsing a brief into [`Command`]s and checking their paths.
//!
//! One command per block; a command line starts with a lowercase keyword:
//! `save PATH` (content is every following line up to the next command line or the end),
//! `read PATH`, `list [DIR]`, `search WORDS`, `remember team` (the following lines replace the
//! whole team memory document) and `recall team`. Paths have no spaces, are relative to the
//! workspace and never contain `..`.

/// The keywords, as shown in error messages.
pub(crate) const USAGE: &str = "commands: `save PATH` followed by the content lines, `read PATH`, \
     `list [DIR]`, `search WORDS`, `remember team` followed by the whole team memory document, \
     `recall team` (one per line; paths are relative, without `..` or spaces)";

/// One parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// Write `content` to `path`.
    Save { path: String, content: String },
    /// Show the document at `path`.
    Read { path: String },
    /// List the documents under `dir` (the workspace root when empty).
    List { dir: String },
    /// Lines containing every word, case-insensitively.
    Search { words: Vec<String> },
    /// Replace the team memory document with `content` (validated by the host).
    Remember { content: String },
    /// Show the team memory document.
    Recall,
}

/// A command line recognised at the start of a block, before its content is attached.
enum Head {
    Save(String),
    Remember,
    Other(Command),
}

/// A command whose content is the lines that follow it.
enum Block {
    Save(String),
    Remember,
}

/// Parses a brief; the error says what was wrong and which commands exist.
pub(crate) fn parse(brief: &str) -> Result<Vec<Command>, String> {
    let mut commands = Vec::new();
    let mut open_save: Option<(Block, Vec<&str>)> = None;
    for (index, line) in brief.lines().enumerate() {
        match head(line) {
            Some(head) => {
                if let Some((block, lines)) = open_save.take() {
                    commands.push(close(block, &lines));
                }
                match head? {
                    Head::Save(path) => open_save = Some((Block::Save(path), Vec::new())),
                    Head::Remember => open_save = Some((Block::Remember, Vec::new())),
                    Head::Other(command) => commands.push(command),
                }
            }
            None => match open_save.as_mut() {
                Some((_, lines)) => lines.push(line),
                None if line.trim().is_empty() => {}
                None => {
                    return Err(format!(
                        "line {} is not a command: `{}`; {USAGE}",
                        index + 1,
                        line.trim()
                    ));
                }
            },
        }
    }
    if let Some((block, lines)) = open_save.take() {
        commands.push(close(block, &lines));
    }
    if commands.is_empty() {
        return Err(format!("the brief holds no command; {USAGE}"));
    }
    Ok(commands)
}

/// Recognises a command line; `None` for content, `Some(Err)` for a command with a bad argument.
fn head(line: &str) -> Option<Result<Head, String>> {
    let line = line.trim_end();
    let (keyword, rest) = match line.split_once(' ') {
        Some((keyword, rest)) => (keyword, rest.trim()),
        None => (line, ""),
    };
    let args: Vec<&str> = rest.split_whitespace().collect();
    let result = match (keyword, args.as_slice()) {
        ("save", [path]) => checked_file(path).map(Head::Save),
        ("read", [path]) => checked_file(path).map(|path| Head::Other(Command::Read { path })),
        ("list", []) => Ok(Head::Other(Command::List { dir: String::new() })),
        ("list", [dir]) => checked_path(dir).map(|dir| Head::Other(Command::List { dir })),
        ("search", words) if !words.is_empty() => Ok(Head::Other(Command::Search {
            words: words.iter().map(|w| w.to_lowercase()).collect(),
        })),
        ("remember", ["team"]) => Ok(Head::Remember),
        ("recall", ["team"]) => Ok(Head::Other(Command::Recall)),
        ("remember" | "recall", []) => Err(format!(
            "`{keyword}` needs the scope `team` (kb holds no private memory rights); {USAGE}"
        )),
        ("save" | "read", []) => Err(format!("`{keyword}` needs a path; {USAGE}")),
        ("search", []) => Err(format!("`search` needs at least one word; {USAGE}")),
        // A keyword followed by prose is content, not a command.
        _ => return None,
    };
    Some(result)
}

/// The command of a block, with its content lines (trailing blank lines dropped).
fn close(block: Block, lines: &[&str]) -> Command {
    let mut end = lines.len();
    while end > 0 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let mut content = lines[..end].join("\n");
    content.push('\n');
    match block {
        Block::Save(path) => Command::Save { path, content },
        Block::Remember => Command::Remember { content },
    }
}

/// Like [`checked_path`], and the path must name something below the workspace root.
fn checked_file(path: &str) -> Result<String, String> {
    let checked = checked_path(path)?;
    if checked.is_empty() {
        return Err(format!(
            "`{path}` names the workspace itself, not a document"
        ));
    }
    Ok(checked)
}

/// Accepts a relative path without `..`; drops `.` segments and repeated slashes.
pub(crate) fn checked_path(path: &str) -> Result<String, String> {
    if path.starts_with('/') || path.starts_with('\\') || path.contains(':') {
        return Err(format!(
            "refusing absolute path `{path}`: paths are relative to the workspace"
        ));
    }
    if path.contains('\\') {
        return Err(format!("refusing path `{path}`: use `/` as the separator"));
    }
    let mut segments = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "refusing path `{path}`: `..` may not leave the workspace"
                ));
            }
            other => segments.push(other),
        }
    }
    Ok(segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_blocks() {
        let cmds = parse("save notes/a.md\n# A\nbody\n\nread notes/a.md\nlist\nsearch Foo bar")
            .unwrap_or_default();
        assert_eq!(
            cmds,
            vec![
                Command::Save {
                    path: "notes/a.md".into(),
                    content: "# A\nbody\n".into()
                },
                Command::Read {
                    path: "notes/a.md".into()
                },
                Command::List { dir: String::new() },
                Command::Search {
                    words: vec!["foo".into(), "bar".into()]
                },
            ]
        );
    }

    #[test]
    fn parses_memory_blocks() {
        let cmds = parse("remember team\n## Decisions\n- 2026-03-01: x\n\nrecall team")
            .unwrap_or_default();
        assert_eq!(
            cmds,
            vec![
                Command::Remember {
                    content: "## Decisions\n- 2026-03-01: x\n".into()
                },
                Command::Recall,
            ]
        );
        assert!(parse("remember").is_err());
        assert!(parse("recall").is_err());
    }

    #[test]
    fn refuses_escapes() {
        assert!(parse("read ../etc/passwd").is_err());
        assert!(parse("save /etc/x.md\nx").is_err());
        assert!(parse("read a/../../b").is_err());
        assert!(parse("hello").is_err());
        assert!(parse("").is_err());
    }
}
