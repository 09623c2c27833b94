//! `sinfo`: the partitions, which one is the default, whether each is up, and its nodes.

/// One partition as sinfo summarises it (its lines merged: sinfo prints one a node shape).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    /// sinfo marks the default partition with `*`.
    pub default: bool,
    /// `%a`: `up`, `down`, `drain`, `inact`.
    pub available: String,
    pub nodes: u32,
    /// `%G` of each node shape, as printed.
    pub gres: Vec<String>,
}

/// The format asked for: partition, availability, node count, GRES, one `|`-separated line
/// per partition and node shape.
pub const ARGS: &[&str] = &["--noheader", "--format=%P|%a|%D|%G"];

/// The command line a comment names.
pub fn shown(program: &str) -> String {
    format!("{} {}", base(program), ARGS.join(" "))
}

/// A program's name without its folder, as a comment names it.
pub fn base(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Partitions in the order sinfo lists them.
pub fn parse(stdout: &str) -> Vec<Partition> {
    let mut out: Vec<Partition> = Vec::new();
    for line in stdout.lines() {
        // Padding, where a sinfo pads a field, is no part of its value.
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        let [name, available, nodes, gres] = parts.as_slice() else {
            continue;
        };
        let (name, default) = match name.strip_suffix('*') {
            Some(n) => (n, true),
            None => (*name, false),
        };
        if name.is_empty() {
            continue;
        }
        let nodes: u32 = nodes.trim().parse().unwrap_or(0);
        match out.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.nodes += nodes;
                p.gres.push((*gres).to_owned());
            }
            None => out.push(Partition {
                name: name.to_owned(),
                default,
                available: (*available).to_owned(),
                nodes,
                gres: vec![(*gres).to_owned()],
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_starred_and_shapes_merge() {
        let out = "boost_usr_prod*|up|2|gpu:4\n\
                   lrd_all_serial|up|3|(null)\n\
                   lrd_all_serial|up|1|gpu:a100:1(S:0)\n";
        let parts = parse(out);
        assert_eq!(parts.len(), 2);
        assert!(parts[0].default && parts[0].name == "boost_usr_prod" && parts[0].nodes == 2);
        assert!(!parts[1].default && parts[1].nodes == 4);
        assert_eq!(parts[1].gres, ["(null)", "gpu:a100:1(S:0)"]);
    }
}
