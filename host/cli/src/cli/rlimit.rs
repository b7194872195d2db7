//! The process's open-file limit, raised at start so that the per-instance handle cap
//! (`[host] max_handles`) is what binds a plugin, not a soft limit of 1,024 shared by every
//! task, HTTP connection and database of the host.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit, and returns the new soft limit. A
/// failure is logged and start-up continues under the old limit.
pub(crate) fn raise_open_file_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        if let Err(e) = setrlimit(Resource::Nofile, limit) {
            tracing::warn!("could not raise the open-file limit to the hard limit: {e}");
        }
    }
    getrlimit(Resource::Nofile).current
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::process::{Resource, getrlimit, setrlimit};

    #[test]
    fn soft_open_file_limit_is_raised_to_the_hard_limit() {
        let mut limit = getrlimit(Resource::Nofile);
        let hard = limit.maximum;
        // Start from a low soft limit, as a default shell gives one.
        limit.current = Some(hard.map_or(256, |h| h.min(256)));
        setrlimit(Resource::Nofile, limit).expect("lowering the soft limit is always allowed");
        assert_ne!(getrlimit(Resource::Nofile).current, hard, "precondition");
        assert_eq!(raise_open_file_limit(), hard);
        assert_eq!(getrlimit(Resource::Nofile).current, hard);
    }
}
