//! The schema check's verdicts against the embedded MarinSkyRL key list: exact messages for
//! types, unknown keys and prefixes, and every knob of every preset and cell (no hydra needed).

use crate::common::knob;
use crate::common::plan_of;
use rlctl::plan::PlanOptions;
use rlctl::preset::Library;
use rlctl::schema::Schema;
use std::sync::OnceLock;

fn marin() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let library = Library::load(None).unwrap();
        let cluster = library.cluster("leonardo").unwrap();
        assert_eq!(
            cluster.software.schema.as_deref(),
            Some("marinskyrl-a559688")
        );
        let schema = library.trainer_schema(&cluster).unwrap();
        drop(library);
        std::rc::Rc::try_unwrap(schema)
            .ok()
            .expect("the library that cached it is gone")
    })
}

fn err(arg: &str) -> String {
    marin()
        .check(&knob(arg))
        .expect_err(&format!("`{arg}` was accepted"))
}

fn ok(arg: &str) {
    if let Err(message) = marin().check(&knob(arg)) {
        panic!("`{arg}` was refused: {message}");
    }
}

#[test]
fn values_of_the_defaults_type_pass() {
    for arg in [
        "trainer.epochs=3",
        "trainer.policy.optimizer_config.lr=1",
        "trainer.policy.optimizer_config.lr=3e-6",
        "generator.enforce_eager=False",
        "trainer.strategy=fsdp",
        "trainer.run_name=2024",
        "trainer.resume_mode=null",
        "deepspeed_config.train.zero_optimization.sub_group_size=1000000",
        "trainer.max_steps=100",
        "data.train_data=['/w/a.parquet','/w/b.parquet']",
        "generator.max_input_length=${trainer.max_prompt_length}",
        "trainer.ckpt_path=/leonardo_work/x",
        "generator.engine_init_kwargs={}",
        "+generator.engine_init_kwargs={max_model_len:4096}",
        "+generator.engine_init_kwargs.max_model_len=4096",
        "+trainer.rope_scaling.factor=4.0",
        "trainer.rope_scaling={rope_type:yarn,factor:4.0}",
        "+trainer.brand_new=1",
        "++trainer.epochs=2",
        "~trainer.policy.optimizer_config.adam_betas",
        "trainer.placement={colocate_all:false,policy_num_nodes:2}",
        "hydra.run.dir=/tmp/x",
    ] {
        ok(arg);
    }
    // A dict merge passes only where SkyRL's dict is empty and the `+` lets hydra add keys.
    assert!(err("generator.engine_init_kwargs={max_model_len:4096}").contains("+generator"));
}

#[test]
fn type_errors_name_the_default_and_what_to_give() {
    let cases = [
        (
            "trainer.train_batch_size=abc",
            "`trainer.train_batch_size=abc`: SkyRL's default is the integer 1024; give an integer",
        ),
        (
            "trainer.epochs=2.0",
            "`trainer.epochs=2.0`: SkyRL's default is the integer 1; give an integer",
        ),
        (
            "trainer.policy.optimizer_config.lr=fast",
            "`trainer.policy.optimizer_config.lr=fast`: SkyRL's default is the float 1e-06; give a number",
        ),
        (
            "generator.enforce_eager=flase",
            "`generator.enforce_eager=flase`: SkyRL's default is the boolean true; give true or false",
        ),
        (
            "generator.enforce_eager=no",
            "`generator.enforce_eager=no`: SkyRL's default is the boolean true; give true or false (hydra reads `no` as a string, which Python takes as true)",
        ),
        (
            "trainer.max_prompt_length=null",
            "`trainer.max_prompt_length=null`: SkyRL's default is the integer 512; give an integer",
        ),
        (
            "trainer.policy.optimizer_config.adam_betas=0.9",
            "`trainer.policy.optimizer_config.adam_betas=0.9`: SkyRL's default is the list [0.9, 0.999]; give a list, e.g. `[a,b]`",
        ),
        (
            "trainer.strategy=[fsdp2]",
            "`trainer.strategy=[fsdp2]`: SkyRL's default is the string \"fsdp2\"; give a single value, not a list or dict",
        ),
        (
            "generator.engine_init_kwargs=5",
            "`generator.engine_init_kwargs=5`: SkyRL's default is the dict {}; give a dict, or add its keys one by one with `+generator.engine_init_kwargs.KEY=VALUE`",
        ),
        (
            "trainer.placement=5",
            "`trainer.placement=5`: SkyRL's default is a section of 11 keys; set its keys one by one, e.g. `trainer.placement.colocate_all=…`, not the whole section",
        ),
        (
            "trainer.placement={colocate_all:maybe}",
            "`trainer.placement={colocate_all:maybe}`: SkyRL's default for `trainer.placement.colocate_all` is the boolean true; give true or false",
        ),
        (
            "+trainer.epochs=[2]",
            "`+trainer.epochs=[2]`: SkyRL's default is the integer 1; give an integer",
        ),
        (
            "+trainer.epochs.x=1",
            "`+trainer.epochs.x=1`: `trainer.epochs` is the integer 1 in SkyRL's config, and a key below it makes hydra replace it by a new dict; set `trainer.epochs` itself",
        ),
        (
            "+trainer.policy.deepspeed_config.x=1",
            "`+trainer.policy.deepspeed_config.x=1`: `trainer.policy.deepspeed_config` is the interpolation ${deepspeed_config.train} in SkyRL's config, and a key below it makes hydra replace it by a new dict; set the key it points to: `+deepspeed_config.train.x=1`",
        ),
        (
            "++trainer.policy.deepspeed_config.zero_optimization.stage=2",
            "`++trainer.policy.deepspeed_config.zero_optimization.stage=2`: `trainer.policy.deepspeed_config` is the interpolation ${deepspeed_config.train} in SkyRL's config, and a key below it makes hydra replace it by a new dict; set the key it points to: `deepspeed_config.train.zero_optimization.stage=2`",
        ),
    ];
    for (arg, message) in cases {
        assert_eq!(err(arg), message);
        // Hydra itself accepts these: the type rule is rlctl's own.
        assert!(marin().check_key(&knob(arg)).is_ok(), "{arg}");
    }
}

#[test]
fn unknown_keys_suggest_the_key_meant_or_how_to_add_one() {
    let cases = [
        (
            "generator.enforce_eagr=true",
            "`generator.enforce_eagr=true`: unknown key `generator.enforce_eagr`: did you mean `generator.enforce_eager`?",
        ),
        (
            "trainer.enforce_eager=false",
            "`trainer.enforce_eager=false`: unknown key `trainer.enforce_eager`: did you mean `teacher.enforce_eager` or `generator.enforce_eager`?",
        ),
        (
            "trainer.polcy.optimizer_config.lr=1e-6",
            "`trainer.polcy.optimizer_config.lr=1e-6`: unknown key `trainer.polcy.optimizer_config.lr`: did you mean `trainer.policy.optimizer_config.lr` or `trainer.critic.optimizer_config.lr`?",
        ),
        (
            "trainer.epochx=2",
            "`trainer.epochx=2`: unknown key `trainer.epochx`: did you mean `trainer.epochs`?",
        ),
        (
            "trainer.quantum_flux=7",
            "`trainer.quantum_flux=7`: unknown key `trainer.quantum_flux`: SkyRL's config (marinskyrl-a559688) has no such key; to add a new key, write `+trainer.quantum_flux=7`",
        ),
        (
            "generator.engine_init_kwargs.max_model_len=4096",
            "`generator.engine_init_kwargs.max_model_len=4096`: `generator.engine_init_kwargs` is a dict SkyRL passes on as it is, and it has no key `max_model_len`: add it with `+generator.engine_init_kwargs.max_model_len=4096` (a new key inside a dict needs `+`)",
        ),
        (
            "trainer.policy.megatron_config.transformer_config_kwargs.recompute_metod=block",
            "`trainer.policy.megatron_config.transformer_config_kwargs.recompute_metod=block`: `trainer.policy.megatron_config.transformer_config_kwargs` is a dict SkyRL passes on as it is, and it has no key `recompute_metod`: did you mean `trainer.policy.megatron_config.transformer_config_kwargs.recompute_method`? To pass a new key, add it with `+trainer.policy.megatron_config.transformer_config_kwargs.recompute_metod=block` (a new key inside a dict needs `+`)",
        ),
        (
            "generator.engine_init_kwargs={max_model_len:4096}",
            "`generator.engine_init_kwargs={max_model_len:4096}`: `generator.engine_init_kwargs` has no key `max_model_len` yet; write `+generator.engine_init_kwargs={max_model_len:4096}` (hydra merges a `{…}` value into the dict, and only `+` lets it add keys)",
        ),
        (
            "trainer.placement={colocate_al:false}",
            "`trainer.placement={colocate_al:false}`: `trainer.placement` has no key `colocate_al`: did you mean `colocate_all`?",
        ),
        (
            "trainer.rope_scaling.factor=4.0",
            "`trainer.rope_scaling.factor=4.0`: `trainer.rope_scaling` is null in SkyRL's config, so it has no key `factor` yet; add it with `+trainer.rope_scaling.factor=4.0`",
        ),
        (
            "trainer.epochs.x=1",
            "`trainer.epochs.x=1`: `trainer.epochs` is the integer 1 in SkyRL's config, not a section, so it has no key `x`; set `trainer.epochs` itself",
        ),
        (
            "trainer.policy.deepspeed_config.zero_optimization.stage=2",
            "`trainer.policy.deepspeed_config.zero_optimization.stage=2`: `trainer.policy.deepspeed_config` is the interpolation ${deepspeed_config.train} in SkyRL's config, with no keys of its own; set the key it points to: `deepspeed_config.train.zero_optimization.stage=2`",
        ),
        (
            "data.train_data.1=/w/x.parquet",
            "`data.train_data.1=/w/x.parquet`: `data.train_data` is a list that has 1 element (index 0) in SkyRL's config, and index 1 is not in it; set the whole list: `data.train_data=[…]`",
        ),
        (
            "data.train_data.first=/w/x.parquet",
            "`data.train_data.first=/w/x.parquet`: `data.train_data` is a list that has 1 element (index 0) in SkyRL's config, and `first` is not an index; set the whole list: `data.train_data=[…]`",
        ),
        (
            "data.train_data={a:1}",
            "`data.train_data={a:1}`: `data.train_data` is the list [\"${oc.env:HOME}/data/gsm8k/train.parquet\"] in SkyRL's config, and hydra cannot merge a dict into it; give a list `[…]`",
        ),
        (
            "trainer.placement=[1]",
            "`trainer.placement=[1]`: `trainer.placement` is a section of 11 keys in SkyRL's config, and hydra cannot merge a list into it; set its keys one by one",
        ),
    ];
    for (arg, message) in cases {
        assert_eq!(err(arg), message);
    }
}

#[test]
fn prefixes_follow_hydras_rules() {
    let cases = [
        (
            "+trainer.epochs=2",
            "`+trainer.epochs=2`: `trainer.epochs` is already in SkyRL's config (the integer 1), and hydra refuses to add it again (\"Could not append to config. An item is already at 'trainer.epochs'\"); write `trainer.epochs=2` without `+`, or `++trainer.epochs=2`",
        ),
        (
            "+generator.model_name=Qwen/Qwen3-8B",
            "`+generator.model_name=Qwen/Qwen3-8B`: `generator.model_name` is already in SkyRL's config (the interpolation ${trainer.policy.model.path}), and hydra refuses to add it again (\"Could not append to config. An item is already at 'generator.model_name'\"); write `generator.model_name=Qwen/Qwen3-8B` without `+`, or `++generator.model_name=Qwen/Qwen3-8B`",
        ),
        (
            "~trainer.nope",
            "`~trainer.nope`: there is no key `trainer.nope` to delete: SkyRL's config (marinskyrl-a559688) has no such key",
        ),
        (
            "~trainer.epoch",
            "`~trainer.epoch`: there is no key `trainer.epoch` to delete: did you mean `trainer.epochs`?",
        ),
        (
            "~trainer.resume_path",
            "`~trainer.resume_path`: `trainer.resume_path` is null in SkyRL's config, and hydra cannot delete a key without a value (it answers \"Could not delete from config. 'trainer.resume_path' does not exist.\"); leave the override out",
        ),
        (
            "~trainer.epochs=2",
            "`~trainer.epochs=2`: hydra deletes `trainer.epochs` only if its value is 2, and SkyRL's default is 1; write `~trainer.epochs` to delete it whatever its value",
        ),
        (
            "~data.train_data.0",
            "`~data.train_data.0`: hydra cannot delete one element of a list; set the whole list instead: `data.train_data=[…]`",
        ),
        (
            "+++trainer.epochs=2",
            "`+++trainer.epochs=2`: `+++` is not a hydra prefix; use `+` to add a key, `++` to add or override, `~` to delete",
        ),
    ];
    for (arg, message) in cases {
        assert_eq!(err(arg), message);
    }
    for arg in [
        "+trainer.resume_path=/w/ckpt/global_step_10",
        "++trainer.epochs=2",
        "++generator.engine_init_kwargs.max_model_len=4096",
        "~trainer.epochs",
        "~trainer.epochs=1",
        "~trainer.placement",
        "~trainer.ref.model.path=Qwen/Qwen2.5-1.5B-Instruct",
    ] {
        ok(arg);
    }
}

#[test]
fn defaults_read_as_written_and_typed() {
    let schema = marin();
    assert_eq!(
        schema.default_text("trainer.algorithm.use_kl_in_reward"),
        Some("false")
    );
    assert_eq!(
        schema.default_text("trainer.policy.optimizer_config.adam_betas"),
        Some("[0.9, 0.999]")
    );
    assert_eq!(
        schema.default_text("trainer.ckpt_path"),
        Some("${oc.env:HOME}/ckpts/")
    );
    assert_eq!(schema.default_text("trainer.placement"), None);
    use rlctl::schema::knob::Scalar;
    assert_eq!(
        schema.default_scalar("trainer.strategy"),
        Some(Scalar::Str("fsdp2".into()))
    );
    assert_eq!(
        schema.default_scalar("trainer.train_batch_size"),
        Some(Scalar::Int(1024))
    );
    assert_eq!(
        schema.default_scalar("trainer.policy.optimizer_config.lr"),
        Some(Scalar::Float(1e-6))
    );
    assert_eq!(
        schema.default_scalar("trainer.max_steps"),
        Some(Scalar::Null)
    );
    assert_eq!(
        schema.default_scalar("generator.engine_init_kwargs"),
        Some(Scalar::Dict("{}".into()))
    );
    assert_eq!(schema.keys().count(), 345);
}

#[test]
fn every_knob_of_every_preset_and_cell_passes_the_embedded_schema() {
    let library = Library::load(None).unwrap();
    let cluster = library.cluster("leonardo").unwrap();
    let schema = marin();
    let mut targets: Vec<String> = library.preset_names().map(str::to_owned).collect();
    for grid in library.grid_names() {
        for cell in &library.grid(grid).unwrap().cells {
            targets.push(format!("{grid}/{}", cell.name));
        }
    }
    assert!(targets.len() >= 39, "{} targets", targets.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for target in &targets {
        let plan = plan_of(&library, &cluster, target, &PlanOptions::default(), &[]).unwrap();
        for knob in &plan.knobs {
            checked += 1;
            if let Err(message) = schema.check(knob) {
                failures.push(format!("{target} ({}): {message}", knob.origin));
            }
        }
    }
    assert!(checked > 1000, "only {checked} knobs checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
