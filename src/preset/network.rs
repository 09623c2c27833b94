//! How a multi-node job's Ray cluster finds and reaches its head, and what the job's network
//! stack is told (a profile's `[network]`).

use crate::error::Result;
use crate::preset::fields::Fields;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// How the head's address is read on the head node.
    #[serde(default = "default_head_address")]
    pub head_address: HeadAddress,
    /// With `head_address = "hostname_suffix"`: what makes a node's hostname its interconnect
    /// name (JUWELS Booster: `jwb0001` -> `jwb0001i`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hostname_suffix: String,
    /// Send every HTTP(S) request of the job's processes to a closed loopback port, so Ray's
    /// cloud-metadata and usage probes never leave the machine (required on the test cluster).
    #[serde(default)]
    pub block_egress: bool,
    /// Seconds to wait for the Ray head to answer, and again for every node's GPUs to join.
    #[serde(default = "default_ray_timeout")]
    pub ray_timeout_s: u32,
    /// Tell NCCL, Gloo and vLLM to use IPv4 only (JUPITER's jobs do: its nodes also carry IPv6
    /// addresses that do not route between them).
    #[serde(default)]
    pub force_ipv4: bool,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            head_address: default_head_address(),
            hostname_suffix: String::new(),
            block_egress: false,
            ray_timeout_s: default_ray_timeout(),
            force_ipv4: false,
        }
    }
}

impl Network {
    /// A hostname suffix is given exactly when the head's address is read through it.
    pub fn validate(&self, f: &Fields) -> Result<()> {
        match (self.head_address, self.hostname_suffix.is_empty()) {
            (HeadAddress::HostnameSuffix, true) => Err(f.invalid(
                "network.head_address = \"hostname_suffix\" needs network.hostname_suffix, the text that makes a \
                 hostname the interconnect's name (JUWELS Booster: \"i\", jwb0001 -> jwb0001i)"
                    .into(),
            )),
            (HeadAddress::HostnameSuffix, false) => {
                f.word("network.hostname_suffix", &self.hostname_suffix)
            }
            (_, false) => Err(f.invalid(
                "network.hostname_suffix is read only with head_address = \"hostname_suffix\": set that, or drop the suffix".into(),
            )),
            (_, true) => Ok(()),
        }
    }
}

fn default_head_address() -> HeadAddress {
    HeadAddress::Interface
}

fn default_ray_timeout() -> u32 {
    180
}

/// The variables `force_ipv4` passes into the container, as JUPITER's job scripts set them.
pub const IPV4_ONLY: [(&str, &str); 3] = [
    ("NCCL_SOCKET_FAMILY", "AF_INET"),
    ("GLOO_USE_IPV6", "0"),
    ("VLLM_FORCE_IPV4", "1"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HeadAddress {
    /// The IPv4 address of `node.interconnect` (ib0 on Leonardo: only it routes between nodes).
    Interface,
    /// `hostname --ip-address`: on the test cluster each node resolves to its own 127.0.1.N,
    /// never 127.0.0.1, which Ray would rewrite to an external address.
    Hostname,
    /// The IPv4 address the node's hostname plus `hostname_suffix` resolves to (JUWELS
    /// Booster's InfiniBand names).
    HostnameSuffix,
}
