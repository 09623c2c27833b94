//! The YAML reader (`import::import`), which composes a hydra config folder into a key list,
//! proved against hydra itself: schema_oracle.py (next to this file) composes the same folder
//! with hydra's compose API and flattens it, and the two lists must be equal line by line, for
//! the installed skyrl-train 0.3.1's config and for config folders that use what SkyRL's does
//! not. The oracle needs hydra-core, omegaconf and skyrl-train 0.3.1, which the workspace's
//! tests/setup.sh installs; without them the tests fail saying so, never skip.

mod common;

use camino::Utf8Path;
use rlctl_grammar::import;

const SETUP: &str = "run `bash tests/setup.sh` at the workspace's root (it installs hydra-core, omegaconf and skyrl-train==0.3.1 from PyPI)";

fn oracle(args: &[&str]) -> String {
    common::python(&common::script("schema_oracle.py"), args, b"", SETUP)
}

/// Both key lists equal, or a failure listing the lines that differ.
fn assert_same_keys(ours: &str, hydra: &str, what: &str) {
    if ours == hydra {
        return;
    }
    let (o, h): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), hydra.lines().collect());
    let mut diff = String::new();
    for i in 0..o.len().max(h.len()) {
        let (a, b) = (o.get(i).copied(), h.get(i).copied());
        if a != b {
            diff.push_str(&format!("line {}:\n  crate {a:?}\n  hydra {b:?}\n", i + 1));
        }
    }
    panic!("{what}: the key list differs from hydra's own flattening:\n{diff}");
}

#[test]
fn the_yaml_reader_composes_skyrls_config_as_hydra_does() {
    let dir = oracle(&["locate"]).trim().to_owned();
    let ours = import::import(Utf8Path::new(&dir)).unwrap();
    let hydra = oracle(&["flatten", &dir]);
    assert!(hydra.lines().count() > 200, "hydra printed too few keys");
    assert_same_keys(&ours, &hydra, "skyrl-train 0.3.1");
}

/// Config folders that use what SkyRL's does not: nested defaults in group files, `_self_`
/// first and absent, `@package` headers (also after a comment, where hydra ignores them),
/// `@_here_`, `@_group_`, absolute groups, option lists, `optional` and null options, hydra's
/// own `override hydra/...`, `???`, and YAML 1.1 scalars as PyYAML and OmegaConf read them.
const FIXTURES: &[&[(&str, &str)]] = &[
    &[
        (
            "ppo_base_config.yaml",
            r#"defaults:
  - db: mysql
  - optional missing_group: nothing
  - server@srv.main: apache
  - server@_here_: nginx
  - server@_group_.alt: nginx
  - /abs_group/leaf@abs: one
  - extra
  - sub/plain
  - _self_
  - late: [a, b]
  - nullgroup: null
  - override hydra/job_logging: disabled

top: 1
db:
  port: 1
  user: ???
srv:
  main:
    port: 8080
yaml11:
  a: yes
  b: 010
  c: 1e-2
  d: 1_000
  e: .5
  f: ~
  g: "quoted: ${top}"
  h: 'single ''q'''
  i: [1, 'two', 3.0, null, {k: v}, "${top}"]
  j: {}
  k: 0x1F
  l: 1:30
  m: +1.5e+3
  n: é
  o: "tab\there \u263A \U0001F600"
  p: !!str 123
  q: &anchor {x: 1, y: 2}
  r:
    <<: *anchor
    y: 3
  s: |
    multi
    line
  t: 2024-01-01
  u: .inf
  v: -.inf
  w: 1e400
  x: 12345678901234567890
  y: 0.1
  z: 100000000000000000.0
  aa: 1.0e+6
  ab: -0.0
  ac: []
  ad: [[1, 2], []]
  ae: Off
  af: 0b101
  ag: 1.
  ah: "1e-2"
  ai: null
  aj: 1_0.5
  ak: 7e-05
  al: 0.0001
  am: 123456789.123
  an: 5e-324
  ao: -1
  aq: 00
  ar: 0o17
interp: ${db.port}
interp2: "${oc.env:HOME}/x"
missing: ???
1: int key
true: bool key
"#,
        ),
        (
            "db/mysql.yaml",
            "defaults:\n  - engine: innodb\nport: 3306\nuser: root\n",
        ),
        (
            "db/engine/innodb.yaml",
            "\n# @package engines.db\nname: innodb\n",
        ),
        (
            "server/apache.yaml",
            "# @package ignored.by.entry\nname: apache\nport: 80\n",
        ),
        ("server/nginx.yaml", "name: nginx\n"),
        (
            "abs_group/leaf/one.yaml",
            "defaults:\n  - _self_\n  - two@deeper: x\nv: 1\n",
        ),
        ("abs_group/leaf/two/x.yaml", "w: 2\n"),
        (
            "extra.yaml",
            "# a plain comment first: the header after it is ignored\n# @package extra_pkg\ne: 1\n",
        ),
        ("sub/plain.yaml", "s: 1\n"),
        ("late/a.yaml", "la: 1\n"),
        ("late/b.yaml", "# @package _global_\ntop: 2\nlb: 2\n"),
    ],
    &[
        (
            "ppo_base_config.yaml",
            "defaults:\n  - model: big\n  - optional model@alt: nonexistent\n  - cfg/inner@placed\n  - _self_\nmodel:\n  size: 0\n",
        ),
        (
            "model/big.yaml",
            "defaults:\n  - _self_\n  - layers@_here_: deep\n  - /shared@shared_copy: common\nsize: 10\nname: big\n",
        ),
        ("model/layers/deep.yaml", "n: 48\nsize: 11\n"),
        ("shared/common.yaml", "# @package _global_.glob\nx: 1\n"),
        ("cfg/inner.yaml", "defaults:\n  - sub: s1\nv: 1\n"),
        ("cfg/sub/s1.yaml", "v: 2\nw: 3\n"),
    ],
];

fn write_fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn the_yaml_reader_follows_hydras_defaults_list_and_yaml_rules() {
    for (i, files) in FIXTURES.iter().enumerate() {
        let dir = write_fixture(files);
        let path = Utf8Path::from_path(dir.path()).unwrap();
        let ours = import::import(path).unwrap();
        let hydra = oracle(&["flatten", path.as_str()]);
        assert_same_keys(&ours, &hydra, &format!("fixture {i}"));
    }
}
