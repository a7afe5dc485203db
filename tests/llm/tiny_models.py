"""Tiny random Hugging Face checkpoints of each family Pocket exports, made locally."""

import torch

# family -> (transformers config class name, model class name, extra config)
FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "llama3": ("LlamaConfig", "LlamaForCausalLM", {
        "rope_theta": 500000.0,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 32}}),
    "mistral": ("MistralConfig", "MistralForCausalLM", {"sliding_window": None}),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 32}),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {"pad_token_id": 0, "sliding_window": 200}),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", {"head_dim": 32, "pad_token_id": 0}),
}


def make_checkpoint(family: str, folder, vocab_size: int = 128, tie: bool = False, seed: int = 0):
    """Writes config.json + model.safetensors of a 3-layer, dim-64 model (the export traces
    layers 0 and 1 and repeats layer 1's graph for layer 2); returns the HF model."""
    import transformers

    config_cls, model_cls, extra = FAMILIES[family]
    config = getattr(transformers, config_cls)(
        vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
        tie_word_embeddings=tie, initializer_range=0.25, bos_token_id=1, eos_token_id=2, **extra)
    torch.manual_seed(seed)
    model = getattr(transformers, model_cls)(config).eval()
    with torch.no_grad():  # norm weights other than their init (ones; Gemma's zeros: 1 + w)
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(torch.randn_like(p) * 0.2)
    model.save_pretrained(folder, safe_serialization=True)
    return model
