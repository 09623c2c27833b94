use super::*;

fn value(arg: &str) -> Y {
    upstream_check(arg).unwrap().value
}

#[test]
fn values_read_as_yaml_scalars() {
    assert_eq!(value("trainer.run_name=a,b"), Y::Str("a,b".into()));
    assert_eq!(value("a=true"), Y::Bool(true));
    assert_eq!(value("a=yes"), Y::Bool(true));
    assert_eq!(value("a=1e-6"), Y::Float(1e-6));
    assert_eq!(value("a=0x10"), Y::Int(16));
    assert_eq!(value("a=1_000"), Y::Int(1000));
    assert_eq!(value("a=~"), Y::Null);
    assert_eq!(value("a="), Y::Null);
    assert_eq!(value("a"), Y::Null);
    assert_eq!(value("a=2024-01-01"), Y::Str("2024-01-01".into()));
    assert_eq!(value("a='1'"), Y::Str("1".into()));
    assert_eq!(value("a=[1,2]"), Y::Seq(vec![Y::Int(1), Y::Int(2)]));
    assert_eq!(value("a=b=c"), Y::Str("b=c".into()));
    assert_eq!(upstream_check("a=[1,2").unwrap_err().stage, Stage::Dotlist);
    assert_eq!(upstream_check("+a=1").unwrap_err().stage, Stage::Plus);
}

#[test]
fn keys_split_as_omegaconf_splits_them() {
    assert_eq!(split_key("a.b"), ["a", "b"]);
    assert_eq!(split_key("a[b]"), ["a", "b"]);
    assert_eq!(split_key(".a.b[c].d"), ["", "a", "b", "c", "d"]);
    assert_eq!(split_key("[a].b"), ["a", "b"]);
    assert_eq!(split_key(""), [""]);
    assert_eq!(split_key("a..b"), ["a", "", "b"]);
}

#[test]
fn keys_are_checked_at_every_class() {
    let keys: &[(&str, &str)] = &[("t.seed", "1"), ("t.m.path", "\"x\""), ("t.kwargs", "{}")];
    let argv = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert!(check_argv(keys, &argv(&["t.seed=2", "t.kwargs.x.y=1"])).is_ok());
    let e = check_argv(keys, &argv(&["t.sed=2"])).unwrap_err();
    assert_eq!(e.stage, Stage::Fields);
    assert!(
        e.message.contains("did you mean `t.seed`?"),
        "{}",
        e.message
    );
    assert_eq!(
        check_argv(keys, &argv(&["t.m.pth=2"])).unwrap_err().stage,
        Stage::Fields
    );
    assert_eq!(
        check_argv(keys, &argv(&["x=2"])).unwrap_err().stage,
        Stage::Fields
    );
    assert_eq!(
        check_argv(keys, &argv(&["t.seed=${t.x}"]))
            .unwrap_err()
            .stage,
        Stage::Resolve
    );
    assert!(check_argv(keys, &argv(&["t.seed=${t.m.path}", "t.m.path=a"])).is_ok());
}

#[test]
fn a_tab_outside_quotes_is_refused_as_pyyaml_refuses_it() {
    assert_eq!(bare_tab("a\tb"), Some(1));
    assert_eq!(bare_tab("\ta"), Some(0));
    assert_eq!(bare_tab("[a,\tb]"), Some(3));
    assert_eq!(bare_tab("'a\tb'"), None);
    assert_eq!(bare_tab("\"a\\\"\tb\""), None);
    assert_eq!(bare_tab("'it''s\t'"), None);
    assert_eq!(bare_tab("it's\tx"), Some(4));
    let refused = upstream_check("trainer.run_name=a\tb").unwrap_err();
    assert_eq!(refused.stage, Stage::Dotlist);
    assert!(upstream_check("trainer.run_name='a\tb'").is_ok());
}

#[test]
fn hydra_resolvers_are_not_upstream_resolvers() {
    let keys: &[(&str, &str)] = &[("trainer.run_name", "x")];
    let argv = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    for value in [
        "run_${now:%Y%m%d}",
        "${hydra:job.name}",
        "${python_version:}",
    ] {
        let refused = check_argv(keys, &argv(&[&format!("trainer.run_name={value}")]));
        let refused = refused.unwrap_err();
        assert_eq!(refused.stage, Stage::Resolve, "{value}");
        assert!(refused.message.contains("oc.*"), "{}", refused.message);
    }
    assert!(check_argv(keys, &argv(&["trainer.run_name=${oc.env:HOME}"])).is_ok());
}
