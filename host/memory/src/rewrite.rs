//! The over-limit rewrite (docs/memory.md, "The rules"): a write refused only for being over the hard limit gets
//! one focused rewrite by an LLM, when the host has one, and the rewrite is used only if it is
//! shorter and passes every rule. Without a rewriter the write is refused as usual.
//!
//! The LLM itself is not here: [`LlmRewriter`] is the hook the host-brokered LLM implements
//! (this crate has no network client for models and must not call upward).

use futures::future::BoxFuture;

use super::Scope;
use super::validator::{HARD_LIMIT_CHARS, Validation, over_limit_error, validate};

/// The notice an accepted rewrite carries, word for word from the protocol.
pub const REWRITE_NOTICE: &str = "Memory was automatically rewritten to fit within limits.";

/// What [`LlmRewriter::rewrite`] returns: the rewritten document, or why there is none.
pub type RewriteFuture<'a> = BoxFuture<'a, Result<String, String>>;

/// Rewrites a memory document that is over the limit so that it fits, keeping its `##`
/// sections and standard bullets (merge related entries, drop stale ones, shorten
/// descriptions). Called at most once per write.
pub trait LlmRewriter: Send + Sync {
    /// One focused rewrite of `text` to at most `limit_chars` characters.
    fn rewrite<'a>(&'a self, text: &'a str, limit_chars: usize) -> RewriteFuture<'a>;
}

/// [`validate`], plus the rewrite: when `new` is refused for its size alone and a `rewriter` is
/// given, its one rewrite is validated in turn and used only if it is accepted and shorter
/// than the refused text; the accepted result then starts with [`REWRITE_NOTICE`]. Otherwise
/// the original refusal stands, with a note saying why the rewrite was not used.
pub async fn validate_with_rewrite(
    scope: Scope,
    new: &str,
    stored: Option<&str>,
    rewriter: Option<&dyn LlmRewriter>,
) -> Validation {
    let first = validate(scope, new, stored);
    let (Some(rewriter), Validation::Refused { errors, usage }) = (rewriter, &first) else {
        return first;
    };
    let only_size = usage.chars > HARD_LIMIT_CHARS
        && errors.len() == 1
        && errors[0] == over_limit_error(usage.chars);
    if !only_size {
        return first;
    }
    let why = match rewriter.rewrite(new, HARD_LIMIT_CHARS).await {
        Err(e) => format!("the rewrite failed: {e}"),
        Ok(candidate) => match validate(scope, &candidate, stored) {
            Validation::Accepted {
                text,
                mut warnings,
                usage: rewritten,
            } if rewritten.chars < usage.chars => {
                warnings.insert(0, REWRITE_NOTICE.to_owned());
                return Validation::Accepted {
                    text,
                    warnings,
                    usage: rewritten,
                };
            }
            Validation::Accepted { .. } => "the rewrite was not shorter".to_owned(),
            Validation::NoOp { reason } => format!("the rewrite was not a document ({reason})"),
            Validation::Refused { errors, .. } => {
                format!("the rewrite broke the rules too ({})", errors.join(" "))
            }
        },
    };
    let mut errors = errors.clone();
    errors.push(format!(
        "An automatic rewrite was tried and not used: {why}"
    ));
    Validation::Refused {
        errors,
        usage: *usage,
    }
}
