//! The hydra knobs of a plan, layer by layer: what the preset implies, the preset's knobs, the
//! grid's, the cell's, what `--nodes` implies, then the command line's. Last wins. Knobs derived
//! from the others' final values come after them all.

use crate::error::{Error, Result};
use crate::plan::overrides::FORCED_KEYS;
use crate::preset::Selection;
use crate::schema::Schema;
use crate::schema::knob::set_knob;
use crate::schema::knob::{Knob, Origin, Scalar};
use camino::Utf8Path;

pub struct Sources<'a> {
    pub selection: &'a Selection<'a>,
    pub nodes: u32,
    /// `--nodes` was given: a colocated policy then spreads its engines over every node.
    pub nodes_from_flag: bool,
    pub gpus_per_node: u32,
    /// The cluster profile's name: the layer that sets the GPUs per node.
    pub profile: &'a str,
    pub data_dir: &'a Utf8Path,
    pub overrides: &'a [Knob],
    /// The cluster's SkyRL key list, for the defaults of keys no layer sets.
    pub schema: &'a Schema,
}

pub fn assemble(s: &Sources) -> Result<Vec<Knob>> {
    Ok(assemble_leaving_out(s)?.0)
}

/// The knobs, and the recipe's knobs the trainer has no counterpart for and that are left out
/// ([`leave_out`]).
pub fn assemble_leaving_out(s: &Sources) -> Result<(Vec<Knob>, Vec<Knob>)> {
    let preset = &s.selection.preset;
    let origin = Origin::Preset(preset.name.clone());
    let typed = |key: &str, value: toml::Value| Knob::typed(key, value, origin.clone());
    let mut knobs = vec![
        typed("trainer.policy.model.path", preset.model.clone().into()),
        typed(
            "data.train_data",
            path_list(&s.data_dir.join(&preset.train_file)),
        ),
        typed(
            "data.val_data",
            path_list(&s.data_dir.join(&preset.val_file)),
        ),
    ];
    if let Some(teacher) = &preset.teacher {
        // The FSDP ref worker holds the teacher; a separate vLLM teacher scores top-k logprobs.
        knobs.push(typed("trainer.ref.model.path", teacher.clone().into()));
        knobs.push(typed("teacher.model_path", teacher.clone().into()));
    }
    let nodes_origin = match s.nodes_from_flag {
        true => Origin::Flag(format!("--nodes {}", s.nodes)),
        false => origin.clone(),
    };
    let profile = Origin::Profile(s.profile.to_owned());
    // Each layer's together: the script groups consecutive knobs under their layer.
    for role in ["policy", "critic", "ref"] {
        let num_nodes = format!("trainer.placement.{role}_num_nodes");
        let nodes = i64::from(s.nodes).into();
        knobs.push(Knob::typed(&num_nodes, nodes, nodes_origin.clone()));
    }
    for role in ["policy", "critic", "ref"] {
        let per_node = format!("trainer.placement.{role}_num_gpus_per_node");
        let gpus = i64::from(s.gpus_per_node).into();
        knobs.push(Knob::typed(&per_node, gpus, profile.clone()));
    }
    let mut layers: Vec<Knob> = preset.knobs.clone();
    if let Some(cell) = &s.selection.cell {
        for (key, value) in &cell.file.knobs.0 {
            let origin = Origin::Grid(cell.grid.to_owned());
            layers.push(Knob::typed(key, value.clone(), origin));
        }
        let c = cell.cell;
        let origin = Origin::Cell(s.selection.name());
        if let Some(steps) = c.max_steps {
            layers.push(Knob::typed(
                "trainer.max_steps",
                steps.into(),
                origin.clone(),
            ));
        }
        for (key, value) in &c.knobs.0 {
            layers.push(Knob::typed(key, value.clone(), origin.clone()));
        }
    }
    for mut knob in layers {
        // A knob may name a key as either flavour spells it; the plan keeps rlctl's name.
        knob.key = s.schema.own_key(&knob.key);
        // The command line's overrides were refused on parsing; presets are checked here.
        if let Some((key, hint)) = FORCED_KEYS.iter().find(|(k, _)| *k == knob.path()) {
            return Err(Error::Unsupported(format!(
                "{} sets `{key}`, which rlctl sets itself: {hint}",
                knob.origin
            )));
        }
        set_knob(&mut knobs, knob);
    }
    if s.nodes_from_flag {
        spread_engines(&mut knobs, s.nodes, s.gpus_per_node);
    }
    for knob in s.overrides {
        let mut knob = knob.clone();
        knob.key = s.schema.own_key(&knob.key);
        set_knob(&mut knobs, knob);
    }
    let left_out = leave_out(&mut knobs, s.schema);
    teacher_max_model_len(s, &mut knobs)?;
    Ok((knobs, left_out))
}

/// MarinSkyRL's OPD recipe on upstream skyrl: what upstream cannot take of the preset's and the
/// grid's own knobs is taken out and returned, to be said: upstream always runs the async engine
/// (`generator.async_engine=false`), and its example has no vLLM teacher (`teacher.*`; its
/// teacher is the reference model, so `teacher.model_path` goes when it names the same model).
/// What a cell or the command line asks for stays, and is refused by name.
fn leave_out(knobs: &mut Vec<Knob>, schema: &Schema) -> Vec<Knob> {
    if schema.flavour() != crate::schema::Flavour::Upstream {
        return Vec::new();
    }
    let value = |key: &str| (knobs.iter().rfind(|k| k.path() == key)).map(|k| k.value.scalar());
    let reference = value("trainer.ref.model.path");
    let no_teacher = !schema.teacher_section();
    let recipe = |k: &Knob| matches!(k.origin, Origin::Preset(_) | Origin::Grid(_));
    let goes = |k: &Knob| match k.path() {
        "teacher.model_path" => no_teacher && Some(k.value.scalar()) == reference,
        "generator.async_engine" => recipe(k) && k.value.scalar() == Scalar::Bool(false),
        path => no_teacher && recipe(k) && path.starts_with("teacher."),
    };
    let (out, kept): (Vec<Knob>, Vec<Knob>) = knobs.drain(..).partition(goes);
    *knobs = kept;
    out
}

/// The teacher's vLLM context length, as hydra's dict passthrough spells it.
pub const TEACHER_MAX_MODEL_LEN: &str = "teacher.engine_init_kwargs.max_model_len";

/// The teacher scores the prompt and the student's whole response as one prompt with one token
/// to generate, so its engine needs `max_model_len` = input + generation length + 1 (vLLM takes
/// a prompt only when `prompt + max_tokens <= max_model_len`; the real OPD scripts, one short,
/// had the longest sequences cut by a token). Left to vLLM it would be the model's full context,
/// whose KV cache does not fit beside a 32B teacher; fixed in a preset it would fall behind a
/// longer `max_generate_length` given on the command line. So unless a layer sets it, it follows
/// the plan's final lengths.
fn teacher_max_model_len(s: &Sources, knobs: &mut Vec<Knob>) -> Result<()> {
    let last = |key: &str| knobs.iter().rfind(|k| k.path() == key);
    let teacher = last("teacher.model_path").map(|k| k.value.scalar());
    // Without a teacher section (upstream's example) a teacher knob is refused: none derived.
    if matches!(teacher, None | Some(Scalar::Null))
        || last(TEACHER_MAX_MODEL_LEN).is_some()
        || !s.schema.teacher_section()
    {
        return Ok(());
    }
    // The generator's input bound when a layer sets one, else the prompt length it defaults to.
    let input = match last("generator.max_input_length").map(|k| k.value.scalar()) {
        Some(Scalar::Int(_)) => "generator.max_input_length",
        _ => "trainer.max_prompt_length",
    };
    let mut total = 1;
    for key in [input, "generator.sampling_params.max_generate_length"] {
        let (value, text) = match last(key) {
            Some(knob) => (knob.value.scalar(), knob.value.hydra_text()),
            None => {
                let schema = s.schema;
                let text = schema.default_text(key).unwrap_or("null").to_owned();
                (schema.default_scalar(key).unwrap_or(Scalar::Null), text)
            }
        };
        let Some(length) = value.as_int().filter(|n| *n > 0) else {
            return Err(Error::Unsupported(format!(
                "the teacher's max_model_len follows the input and generation lengths, but `{key}={text}` is not a \
                 positive integer: set `+{TEACHER_MAX_MODEL_LEN}=N` yourself"
            )));
        };
        total += length;
    }
    let origin = Origin::Derived(format!(
        "teacher max_model_len = {input} + generator.sampling_params.max_generate_length + 1"
    ));
    knobs.push(Knob::typed(
        &format!("+{TEACHER_MAX_MODEL_LEN}"),
        total.into(),
        origin,
    ));
    Ok(())
}

/// With `--nodes N`, a colocated policy that spans the job gets engines = N x GPUs / TP.
fn spread_engines(knobs: &mut Vec<Knob>, nodes: u32, gpus: u32) {
    let value = |key: &str| {
        knobs
            .iter()
            .rfind(|k| k.path() == key)
            .map(|k| k.value.scalar())
    };
    let colocated = value("trainer.placement.colocate_all") == Some(Scalar::Bool(true));
    let spans_job = value("trainer.placement.policy_num_nodes").and_then(|v| v.as_int())
        == Some(i64::from(nodes));
    let tp = value("generator.inference_engine_tensor_parallel_size")
        .and_then(|v| v.as_int())
        .unwrap_or(1)
        .max(1);
    if colocated && spans_job {
        let engines = i64::from(nodes) * i64::from(gpus) / tp;
        let origin = Origin::Flag(format!("--nodes {nodes}"));
        set_knob(
            knobs,
            Knob::typed("generator.num_inference_engines", engines.into(), origin),
        );
    }
}

fn path_list(path: &Utf8Path) -> toml::Value {
    toml::Value::Array(vec![path.to_string().into()])
}
