//! Keeping granted secrets out of everything that crosses a guest's boundary, both ways.
//!
//! The host attaches a secret to the requests for its hosts and the guest never reads it
//! through any API; but an upstream that echoes what it receives (an echo endpoint, an error
//! page quoting the `Authorization` header, a Basic-auth check answering in base64) would hand
//! the value to the guest, which could then return it in a report, a log line or a team memory
//! served to every client. [`reflection`](crate::reflection) stops it on the way to
//! another host; a [`Redactor`] stops it everywhere else.
//!
//! One redactor is built per plugin version from the values of the secrets granted to it
//! ([`Redactor::for_policy`]) and applied where data crosses the guest boundary. What is
//! searched: each secret's header value, its credentials alone (`Bearer abc…` → `abc…`) and the
//! value as granted, at least [`MIN_SEARCHED_BYTES`] long, in any letter case and spelled with
//! any mix of percent-encoding, JSON or JavaScript escapes and HTML character references; and the
//! base64 (standard and URL-safe, at every byte offset inside a longer encoded text, wrapped
//! or not) and hex encodings of each. A match is replaced with [`MARKER`].
//!
//! Per path, redact or refuse:
//! - **Into the guest** — HTTP response headers and bodies (Guild's `http` interface and
//!   `wasi:http`), HTTP error texts, memory documents read, tool outcomes returned to a
//!   specialist: *redacted*. The guest needs the rest of the answer, and a guest that never
//!   receives the value cannot leak it in any transformation, which is the real protection.
//! - **Out of the guest** — logs, stdout and stderr, progress reports, the final report and its
//!   error, connector outcomes (and with them receipts and MCP results), memory writes,
//!   descriptions and tool specs, the cause of a trap: *redacted*, so nothing but the secret is
//!   lost; identifiers (`external_id`, `verifiable_url`) that carry one are dropped instead, as
//!   a cut identifier would name another object.
//! - **Tool inputs** a specialist sends to a connector: *refused* (the call fails as denied,
//!   naming the secret, never its value). A tool call acts on the outside world; silently
//!   changing its input would make the connector act on data the specialist did not send, and
//!   the receipt would record it.
//!
//! The outbound side is defence in depth: a guest that has learnt a value by a path not
//! covered here (an upstream that reverses, compresses or encrypts its echo) can transform it
//! beyond any search. See `docs/security.md`.

mod forms;
mod matcher;

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use forms::{Form, forms_of};

use crate::policy::{EgressPolicy, SecretHeader};
pub use crate::reflection::MIN_SEARCHED_BYTES;

/// What replaces a secret's value (or an encoding of it). Plain ASCII with no quote, backslash
/// or control character: valid in a header value, inside a JSON string and on a log line.
pub const MARKER: &str = "[REDACTED]";

/// The granted secrets of one plugin version, ready to be searched for. Cheap to share
/// (`Arc`); [`Redactor::default`] has no secret and changes nothing.
#[derive(Clone)]
pub struct Redactor {
    /// Every form, with the index of its secret in `names`.
    forms: Vec<(usize, Form)>,
    names: Vec<String>,
    /// Bytes a match can start with (a form's first byte in either case, an escape's start).
    starts: [bool; 256],
    /// The most text bytes one match can cover.
    max_span: usize,
}

impl Default for Redactor {
    fn default() -> Self {
        Self {
            forms: Vec::new(),
            names: Vec::new(),
            starts: [false; 256],
            max_span: 0,
        }
    }
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.names)
            .field("forms", &self.forms.len())
            .finish()
    }
}

impl Redactor {
    /// The redactor for the secrets `policy` attaches.
    pub fn for_policy(policy: &EgressPolicy) -> Self {
        Self::new(&policy.secrets)
    }

    /// The redactor for `secrets`.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a SecretHeader>) -> Self {
        let mut redactor = Self::default();
        for secret in secrets {
            let values: Vec<&[u8]> = secret.needles().collect();
            // A value that contains another is found through it (base64 at every offset
            // included), so only the shortest ones are searched.
            let minimal = values
                .iter()
                .filter(|v| !values.iter().any(|o| o.len() < v.len() && contains(v, o)));
            let index = redactor.names.len();
            redactor.names.push(secret.name().to_owned());
            for value in minimal {
                for form in forms_of(value) {
                    redactor.add(index, form);
                }
            }
        }
        redactor
    }

    fn add(&mut self, index: usize, form: Form) {
        if self.forms.iter().any(|(_, f)| *f == form) {
            return;
        }
        let first = form.bytes[0];
        self.starts[usize::from(first)] = true;
        if form.fold == forms::Fold::AnyCase {
            self.starts[usize::from(first.to_ascii_lowercase())] = true;
            self.starts[usize::from(first.to_ascii_uppercase())] = true;
        }
        for &b in matcher::ESCAPE_STARTS {
            self.starts[usize::from(b)] = true;
        }
        self.max_span = self.max_span.max(matcher::max_span(form.bytes.len()));
        self.forms.push((index, form));
    }

    /// Whether there is nothing to search for.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// The most bytes one match can cover: a text cut into pieces (a long log line) must keep
    /// this much of each piece for the next, so a value across the cut is still found.
    pub fn max_span(&self) -> usize {
        self.max_span
    }

    /// The name of the first secret found in `data` (to refuse it, naming the secret only).
    pub fn find(&self, data: &[u8]) -> Option<&str> {
        self.first_from(data, 0)
            .map(|(_, index)| self.names[index].as_str())
    }

    /// Where secrets are found in `data`, in order, not overlapping.
    pub fn spans(&self, data: &[u8]) -> Vec<Range<usize>> {
        let mut spans = Vec::new();
        let mut from = 0;
        while let Some((span, _)) = self.first_from(data, from) {
            from = span.end;
            spans.push(span);
        }
        spans
    }

    /// The first match at or after `from`: its span (the longest one starting there) and its
    /// secret.
    fn first_from(&self, data: &[u8], from: usize) -> Option<(Range<usize>, usize)> {
        if self.is_empty() {
            return None;
        }
        for start in from..data.len() {
            if !self.starts[usize::from(data[start])] {
                continue;
            }
            let first = matcher::first_bytes(data, start);
            let found = self
                .forms
                .iter()
                .filter(|(_, form)| matcher::can_start(form, &first))
                .filter_map(|(index, form)| {
                    matcher::match_at(data, start, form).map(|end| (end, *index))
                })
                .max_by_key(|(end, _)| *end);
            if let Some((end, index)) = found {
                return Some((start..end, index));
            }
        }
        None
    }

    /// `data` with every secret found replaced by [`MARKER`]; borrowed when there is none.
    pub fn redact<'a>(&self, data: &'a [u8]) -> Cow<'a, [u8]> {
        let spans = self.spans(data);
        if spans.is_empty() {
            return Cow::Borrowed(data);
        }
        let mut out = Vec::with_capacity(data.len());
        let mut kept = 0;
        for span in spans {
            out.extend_from_slice(&data[kept..span.start]);
            out.extend_from_slice(MARKER.as_bytes());
            kept = span.end;
        }
        out.extend_from_slice(&data[kept..]);
        Cow::Owned(out)
    }

    /// [`redact`](Self::redact) for text.
    pub fn redact_str<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.redact(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // A match starts at a form's first byte or an ASCII escape and ends after a whole
            // character, so the text stays UTF-8; lossy decoding only guards the invariant.
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
        }
    }

    /// Redacts `text` where it is.
    pub fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redact_str(text) {
            *text = redacted;
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests;
