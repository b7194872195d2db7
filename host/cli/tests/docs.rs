//! The documentation against the real `guild` binary: every `guild …` command line that
//! `README.md` and `docs/*.md` show must name subcommands and flags the binary has, so a renamed
//! or removed command cannot linger in the docs. Also: every relative link in them resolves.
//!
//! Which lines count (kept simple on purpose, so an author can predict it):
//! - only fenced code blocks whose info string is `sh`, `shell`, `bash` or `console`; other
//!   blocks (`toml`, `text`, synopses in plain fences, sample output) are not read;
//! - a line ending in `\` continues on the next; a leading `$ ` prompt is dropped; `#` starting
//!   a word begins a comment;
//! - a line is split into commands at `&&`, `||`, `;`, `|` and `&`; a command stops at a
//!   redirection (`>`, `<`);
//! - a command is checked when its first word (after `NAME=value` assignments) is `guild` (or a
//!   path ending in `/guild`), when it is `cargo run … -- ARGS` with `-p guild-cli` (ARGS are
//!   `guild`'s), or when `guild` follows a `--` (`claude mcp add guild -- guild serve`).
//!
//! Each checked command is walked against `guild [SUBCOMMAND…] --help`: every `--long` and `-s`
//! flag must be listed for the subcommand it follows, and a word where a subcommand is expected
//! (the command has subcommands and takes no positional argument there) must be one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository's root (this crate is `host/cli`).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `README.md` and every `docs/*.md`, sorted, as (path relative to the repository, text).
fn documents() -> Vec<(String, String)> {
    let root = repo();
    let mut names = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| {
            e.expect("read docs/")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).expect("read a document");
            (n, text)
        })
        .collect()
}

/// One `guild` invocation shown in a document: where, and the arguments after `guild`.
#[derive(Debug)]
struct Shown {
    place: String,
    args: Vec<String>,
}

/// The info strings of the blocks whose lines are commands.
const SHELL_BLOCKS: [&str; 4] = ["sh", "shell", "bash", "console"];

/// The command lines of the shell blocks of `text`: (line number, line with continuations joined).
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<(String, bool)> = None; // (fence marker, is a shell block)
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (&fence, marker) {
            (None, Some(m)) => {
                let info = trimmed.trim_start_matches(m).split_whitespace().next();
                let shell = info.is_some_and(|i| SHELL_BLOCKS.contains(&i));
                fence = Some((m.to_owned(), shell));
                continue;
            }
            (Some((open, _)), Some(m)) if open == m => {
                fence = None;
                continue;
            }
            _ => {}
        }
        let Some((_, true)) = fence else { continue };
        let content = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        match content.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head);
                joined.push(' ');
                pending = Some((start, joined));
            }
            None => {
                joined.push_str(content);
                out.push((start, joined));
            }
        }
    }
    out
}

/// A shell word or an operator that ends a command (`&&`, `||`, `;`, `|`, `&`) or starts a
/// redirection (`>`, `<`).
#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    End,
    Redirect,
}

/// Splits a line as a shell would, enough for the docs: quotes, comments, operators.
fn tokens(line: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let flush = |word: &mut String, in_word: &mut bool, out: &mut Vec<Token>| {
        if *in_word {
            out.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => flush(&mut word, &mut in_word, &mut out),
            ';' | '|' | '&' => {
                flush(&mut word, &mut in_word, &mut out);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                out.push(Token::End);
            }
            '>' | '<' => {
                // `2>` names a file descriptor, not a word.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                flush(&mut word, &mut in_word, &mut out);
                out.push(Token::Redirect);
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    flush(&mut word, &mut in_word, &mut out);
    out
}

/// The arguments `guild` gets in one command, if the command runs `guild`.
fn guild_args(words: &[String]) -> Option<Vec<String>> {
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| {
            w.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
            })
        })
        .collect();
    let rest = |from: usize| words[from..].iter().map(|w| (*w).to_owned()).collect();
    let is_guild = |w: &str| w == "guild" || w.ends_with("/guild");
    if words.first().is_some_and(|w| is_guild(w)) {
        return Some(rest(1));
    }
    if words.starts_with(&["cargo", "run"]) && words.contains(&"guild-cli") {
        let dashes = words.iter().position(|w| *w == "--")?;
        return Some(rest(dashes + 1));
    }
    let at = words
        .windows(2)
        .position(|w| w[0] == "--" && is_guild(w[1]))?;
    Some(rest(at + 2))
}

/// Every `guild` invocation that the shell blocks of `text` (from `file`) show.
fn shown_in(file: &str, text: &str) -> Vec<Shown> {
    let mut out = Vec::new();
    for (line, content) in shell_lines(text) {
        let mut words = Vec::new();
        let mut redirected = false;
        let mut tokens = tokens(&content);
        tokens.push(Token::End);
        for token in tokens {
            match token {
                Token::Word(w) if !redirected => words.push(w),
                Token::Word(_) => {}
                Token::Redirect => redirected = true,
                Token::End => {
                    if let Some(args) = guild_args(&words) {
                        out.push(Shown {
                            place: format!("{file}:{line}"),
                            args,
                        });
                    }
                    words.clear();
                    redirected = false;
                }
            }
        }
    }
    out
}

/// One flag as `--help` lists it.
#[derive(Debug)]
struct Flag {
    long: Option<String>,
    short: Option<char>,
    takes_value: bool,
}

/// What `guild [PATH…] --help` says a command accepts.
#[derive(Debug, Default)]
struct Help {
    commands: Vec<String>,
    flags: Vec<Flag>,
    has_arguments: bool,
}

/// Reads clap's help text: the `Commands:`, `Arguments:` and `Options:` sections.
fn parse_help(text: &str) -> Help {
    let mut help = Help::default();
    let mut section = "";
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
            continue;
        }
        // Entries are indented by two; their wrapped descriptions by more.
        let indent = line.len() - line.trim_start().len();
        if line.trim().is_empty() || indent > 6 {
            continue;
        }
        let entry = line.trim_start();
        let spec = entry.split("  ").next().unwrap_or(entry);
        match section {
            "Commands:" => {
                if let Some(name) = spec.split_whitespace().next()
                    && name != "help"
                {
                    help.commands.push(name.trim_end_matches(',').to_owned());
                }
            }
            "Arguments:" => help.has_arguments = true,
            "Options:" if entry.starts_with('-') => {
                let mut flag = Flag {
                    long: None,
                    short: None,
                    takes_value: false,
                };
                for part in spec.split([' ', ',']).filter(|p| !p.is_empty()) {
                    if let Some(long) = part.strip_prefix("--") {
                        flag.long = Some(long.trim_end_matches("...").to_owned());
                    } else if let Some(short) = part.strip_prefix('-') {
                        flag.short = short.chars().next();
                    } else if part.starts_with('<') || part.starts_with("[<") {
                        flag.takes_value = true;
                    }
                }
                help.flags.push(flag);
            }
            _ => {}
        }
    }
    help
}

/// `guild PATH… --help`, run once per path.
struct Helps {
    cache: HashMap<Vec<String>, Help>,
}

impl Helps {
    fn new() -> Self {
        Self {
            cache: HashMap::new(),
        }
    }

    fn get(&mut self, path: &[String]) -> &Help {
        self.cache.entry(path.to_vec()).or_insert_with(|| {
            let out = Command::new(env!("CARGO_BIN_EXE_guild"))
                .args(path)
                .arg("--help")
                .env_remove("GUILD_CONFIG")
                .env_remove("GUILD_LOG")
                .stdin(Stdio::null())
                .output()
                .expect("guild runs");
            assert!(
                out.status.success(),
                "guild {} --help failed: {}",
                path.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
            parse_help(&String::from_utf8_lossy(&out.stdout))
        })
    }
}

/// Walks one invocation against the help texts; `Err` names the first word that does not exist.
fn check(helps: &mut Helps, args: &[String]) -> Result<(), String> {
    let mut path: Vec<String> = Vec::new();
    let mut positional = false;
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        let help = helps.get(&path);
        let here = || format!("`guild {}`", path.join(" ")).replace(" `", "`");
        if word == "--" {
            break;
        } else if let Some(long) = word.strip_prefix("--") {
            let (name, inline_value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            let Some(flag) = help.flags.iter().find(|f| f.long.as_deref() == Some(name)) else {
                return Err(format!("{} has no flag --{name}", here()));
            };
            if flag.takes_value && !inline_value {
                i += 1;
            }
        } else if word.len() > 1 && word.starts_with('-') {
            for (at, c) in word.char_indices().skip(1) {
                let Some(flag) = help.flags.iter().find(|f| f.short == Some(c)) else {
                    return Err(format!("{} has no flag -{c}", here()));
                };
                if flag.takes_value {
                    // `-oFILE` carries its value; `-o FILE` takes the next word.
                    if at + c.len_utf8() == word.len() {
                        i += 1;
                    }
                    break;
                }
            }
        } else if !help.commands.is_empty() && !positional {
            if help.commands.iter().any(|c| c == word) {
                path.push(word.clone());
            } else if help.has_arguments {
                positional = true;
            } else {
                return Err(format!(
                    "{} has no subcommand `{word}` (it has: {})",
                    here(),
                    help.commands.join(", ")
                ));
            }
        } else {
            positional = true;
        }
        i += 1;
    }
    Ok(())
}

/// Every problem in `shown`, one line each.
fn problems(helps: &mut Helps, shown: &[Shown]) -> Vec<String> {
    shown
        .iter()
        .filter_map(|s| {
            check(helps, &s.args)
                .err()
                .map(|e| format!("{}: guild {}: {e}", s.place, s.args.join(" ")))
        })
        .collect()
}

#[test]
fn every_command_the_docs_show_exists_in_guild_help() {
    let mut shown = Vec::new();
    for (file, text) in documents() {
        shown.extend(shown_in(&file, &text));
    }
    // The extraction itself must find the docs' commands, or this test would check nothing.
    assert!(
        shown.len() >= 30,
        "only {} guild commands found in README.md and docs/*.md: {shown:#?}",
        shown.len()
    );
    eprintln!("{} guild command lines checked", shown.len());
    let mut helps = Helps::new();
    let problems = problems(&mut helps, &shown);
    assert!(
        problems.is_empty(),
        "the docs show commands or flags that `guild` does not have:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_made_up_command_or_flag_in_a_shell_block_is_caught() {
    let doc = "\
Prose mentions `guild frobnicate`, which is not read.

```sh
guild --config guild.toml task probe \"hi there\"   # fine
guild frobnicate
cargo run -p guild-cli -- --config x.toml plugins show triage && guild plugins frob NAME
guild task --no-such-flag probe hi
guild bundle pack plugins/kb -o kb.guild -Q > out.txt
GUILD_LOG=debug target/debug/guild -vv receipts verify | head
claude mcp add guild -- \"$PWD/target/debug/guild\" serve --http 127.0.0.1:0 \\
    --watch-forever
```

```text
guild frobnicate --in-a-text-block-so-not-read
```
";
    let shown = shown_in("doc.md", doc);
    let lines: Vec<String> = shown.iter().map(|s| s.args.join(" ")).collect();
    assert_eq!(
        lines,
        [
            "--config guild.toml task probe hi there",
            "frobnicate",
            "--config x.toml plugins show triage",
            "plugins frob NAME",
            "task --no-such-flag probe hi",
            "bundle pack plugins/kb -o kb.guild -Q",
            "-vv receipts verify",
            "serve --http 127.0.0.1:0 --watch-forever",
        ]
    );
    let mut helps = Helps::new();
    let verdicts: Vec<Result<(), String>> =
        shown.iter().map(|s| check(&mut helps, &s.args)).collect();
    // Allowed: real commands, global flags before the subcommand, values after flags.
    for ok in [0, 2, 6] {
        assert_eq!(verdicts[ok], Ok(()), "{}", lines[ok]);
    }
    // Denied: each made-up word is named.
    let expect_err = [
        (1, "`guild` has no subcommand `frobnicate`"),
        (3, "`guild plugins` has no subcommand `frob`"),
        (4, "`guild task` has no flag --no-such-flag"),
        (5, "`guild bundle pack` has no flag -Q"),
        (7, "`guild serve` has no flag --watch-forever"),
    ];
    for (at, message) in expect_err {
        let err = verdicts[at].as_ref().expect_err(&lines[at]);
        assert!(err.contains(message), "{}: {err}", lines[at]);
    }
}

/// The anchors GitHub gives the headings of `text` (outside code blocks): lower case, spaces
/// to `-`, everything but letters, digits, `-` and `_` dropped.
fn anchors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        if in_code {
            continue;
        }
        let heading = heading.trim_start_matches('#').trim();
        let anchor: String = heading
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        out.push(anchor);
    }
    out
}

/// Every relative link of README.md and docs/*.md points at a file or folder that exists, and
/// a `#section` of a markdown file at one of its headings.
#[test]
fn relative_links_in_the_docs_resolve() {
    let root = repo();
    let documents = documents();
    let headings: HashMap<PathBuf, Vec<String>> = documents
        .iter()
        .map(|(file, text)| (root.join(file), anchors(text)))
        .collect();
    let mut broken = Vec::new();
    for (file, text) in &documents {
        let base = root.join(file);
        let base = base.parent().expect("a document has a folder");
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let link = &rest[..end];
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (target, anchor) = link.split_once('#').unwrap_or((link, ""));
            let path = if target.is_empty() {
                root.join(file)
            } else {
                base.join(target)
            };
            if !path.exists() {
                broken.push(format!("{file}: {link} (no such file)"));
                continue;
            }
            let known = std::fs::canonicalize(&path).ok().and_then(|p| {
                headings
                    .iter()
                    .find(|(doc, _)| std::fs::canonicalize(doc).ok().as_ref() == Some(&p))
            });
            if let Some((_, anchors)) = known
                && !anchor.is_empty()
                && !anchors.iter().any(|a| a == anchor)
            {
                broken.push(format!("{file}: {link} (no such heading)"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
