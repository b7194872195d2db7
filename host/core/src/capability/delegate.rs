//! Delegation: the manifest's `[capabilities] delegate` ∩ the operator's `[grants.NAME]
//! delegate`, both lists of specialist names (docs/delegation.md). The effective list names the
//! specialists this plugin may start as child tasks; an empty one denies every delegation.

use std::collections::BTreeSet;

use super::report::CapabilityRow;

/// The specialists requested and granted, plus one row per requested or granted name.
pub(super) fn resolve(
    requested: &[String],
    granted: &[String],
    rows: &mut Vec<CapabilityRow>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for name in requested {
        if granted.contains(name) {
            out.insert(name.clone());
            rows.push(CapabilityRow::granted(
                "delegate",
                name,
                "may start it as a child task",
            ));
        } else {
            rows.push(CapabilityRow::denied("delegate", name, "not granted"));
        }
    }
    for name in granted.iter().filter(|n| !requested.contains(n)) {
        rows.push(CapabilityRow::unused("delegate", name));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::RowStatus;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn effective_is_requested_and_granted() {
        let mut rows = Vec::new();
        let got = resolve(&names(&["a", "b"]), &names(&["b", "c"]), &mut rows);
        assert_eq!(got.into_iter().collect::<Vec<_>>(), ["b"]);
        assert!(
            rows.iter()
                .any(|r| r.target == "a" && r.status == RowStatus::Denied("not granted".into()))
        );
        assert!(
            rows.iter()
                .any(|r| r.target == "c" && r.status == RowStatus::Unused)
        );
    }

    #[test]
    fn manifest_and_config_carry_the_request_the_grant_and_the_tree_limits() {
        use crate::config::Config;
        use crate::manifest::Manifest;
        use std::path::Path;
        let manifest = Manifest::parse(
            "[plugin]\nname = \"boss\"\nversion = \"1.0.0\"\nkind = \"specialist\"\n\
             component = \"boss.wasm\"\n[capabilities]\ndelegate = [\"kb\", \"tracker\"]\n",
            Path::new("/plugins/boss"),
        )
        .expect("manifest parses");
        let dir = tempfile::tempdir().expect("tempdir");
        let parse = |text: &str| Config::parse(text, &dir.path().join("guild.toml"), dir.path());
        let config = parse(
            "[grants.boss]\ndelegate = [\"kb\"]\n[delegate]\nmax_depth = 3\n\
             [delegate.budget]\ntasks = 5\n",
        )
        .expect("config parses");
        assert_eq!(config.delegate.max_depth, 3);
        assert_eq!(config.delegate.max_children, 4, "default");
        assert_eq!(config.delegate.budget.tasks, 5);
        assert_eq!(config.delegate.budget.tool_calls, 256, "default");
        let (eff, rows) = crate::capability::resolve(&manifest, &config).expect("resolves");
        assert_eq!(eff.delegate.into_iter().collect::<Vec<_>>(), ["kb"]);
        assert!(eff.delegate_requested);
        assert!(rows.iter().any(|r| r.capability == "delegate"
            && r.target == "tracker"
            && r.status == RowStatus::Denied("not granted".into())));
        let (eff, _) = crate::capability::resolve(&manifest, &parse("").expect("empty config"))
            .expect("resolves");
        assert!(eff.delegate.is_empty(), "no grant denies");
        let err = parse("[delegate]\nmax_depth = 99\n").expect_err("out of range");
        assert!(err.to_string().contains("delegate.max_depth"), "{err}");
    }

    #[test]
    fn an_empty_grant_or_request_denies_every_specialist() {
        let mut rows = Vec::new();
        assert!(resolve(&names(&["a"]), &[], &mut rows).is_empty());
        assert!(resolve(&[], &names(&["a"]), &mut rows).is_empty());
    }
}
