"""Reformer enwik8 (character-level) LM logits for a batch of 1024 x 32 token ids."""
import torch
import torch.nn as nn

try:
    from transformers import AutoConfig, AutoModelForCausalLM
except ImportError as e:  # the HuggingFace problems are an optional extra
    raise ImportError("this problem needs transformers, the `hf` extra: pip install kb-data[hf]") from e

REQUIRES = ["transformers"]
# random_in_forward: LSH attention draws random rotations (torch.randn) on every forward,
# since hash_seed is None.
QUIRKS = ["pretrained_weights", "random_in_forward"]

model_name = "google/reformer-enwik8"
HF_MODEL_ID = model_name
# Upstream fetches the config from the Hub (AutoConfig.from_pretrained(model_name)); we write out the
# published checkpoint's values instead, so nothing is downloaded.
HF_CONFIG = {
    "model_type": "reformer",
    "vocab_size": 258,
    "hidden_size": 1024,
    "attention_head_size": 128,
    "num_attention_heads": 8,
    "num_hidden_layers": 12,
    "attn_layers": [
        "local", "local", "lsh", "local", "local", "local",
        "lsh", "local", "local", "local", "lsh", "local",
    ],
    "num_hashes": 4,
    "num_buckets": 512,
    "lsh_attn_chunk_length": 256,
    "local_attn_chunk_length": 128,
    "lsh_num_chunks_before": 1,
    "lsh_num_chunks_after": 0,
    "local_num_chunks_before": 1,
    "local_num_chunks_after": 0,
    "hidden_act": "relu",
    "feed_forward_size": 4096,
    "hidden_dropout_prob": 0.2,
    "lsh_attention_probs_dropout_prob": 0.1,
    "local_attention_probs_dropout_prob": 0.2,
    "max_position_embeddings": 65536,
    "axial_pos_embds": True,
    "axial_pos_shape": [128, 512],
    "axial_pos_embds_dim": [256, 768],
    "axial_norm_std": 1.0,
    "chunk_size_lm_head": 0,
    "chunk_size_feed_forward": 0,
    "is_decoder": True,
    "tie_word_embeddings": False,
    "pad_token_id": 0,
    "eos_token_id": 2,
    "hash_seed": None,
    "layer_norm_eps": 1e-12,
    "initializer_range": 0.02,
}
config = AutoConfig.for_model(**HF_CONFIG)
vocab_size = config.vocab_size
sequence_length = 32
batch_size = 1024


class Model(nn.Module):
    def __init__(self, model_name, config):
        super().__init__()
        self.model_name = model_name
        self.config = config
        # Upstream loads the pretrained checkpoint (from_pretrained); we build the same architecture
        # with random weights, so numbers agree only through a state_dict copy.
        self.model = AutoModelForCausalLM.from_config(config)
        # from_pretrained returns the model in eval mode: keep dropout off (and transformers' eval-only
        # paths) as upstream does.
        self.model.eval()

    def forward(self, x):
        return self.model(x).logits


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, sequence_length))]


def get_init_inputs():
    return [model_name, config]
