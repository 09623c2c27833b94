"""STAND-IN for the one function of upstream's inference-server utilities that the real config's
`__post_init__` imports: the real module imports vLLM and torch, which the tests do not have.
Same rule as upstream 0.4.0's: LoRA adapters are synced when the policy's LoRA rank is positive,
unless Megatron merges them into the base weights."""


def _uses_lora_weight_sync(cfg):
    if cfg.trainer.policy.model.lora.rank <= 0:
        return False
    if cfg.trainer.strategy == "megatron":
        return not cfg.trainer.policy.megatron_config.lora_config.merge_lora
    return True
