"""OPT-1.3B causal-LM logits for a batch of 32 x 256 token ids."""
import torch
import torch.nn as nn

try:
    from transformers import AutoConfig, AutoModelForCausalLM
except ImportError as e:  # the HuggingFace problems are an optional extra
    raise ImportError("this problem needs transformers, the `hf` extra: pip install kb-data[hf]") from e

REQUIRES = ["transformers"]
QUIRKS = ["pretrained_weights"]

model_name = "facebook/opt-1.3b"
HF_MODEL_ID = model_name
# Upstream fetches the config from the Hub (AutoConfig.from_pretrained(model_name)); we write out the
# published checkpoint's values instead, so nothing is downloaded.
HF_CONFIG = {
    "model_type": "opt",
    "vocab_size": 50272,
    "hidden_size": 2048,
    "num_hidden_layers": 24,
    "ffn_dim": 8192,
    "num_attention_heads": 32,
    "max_position_embeddings": 2048,
    "word_embed_proj_dim": 2048,
    "do_layer_norm_before": True,
    "activation_function": "relu",
    "dropout": 0.1,
    "attention_dropout": 0.0,
    "activation_dropout": 0.0,
    "layerdrop": 0.0,
    "init_std": 0.02,
    "pad_token_id": 1,
    "bos_token_id": 2,
    "eos_token_id": 2,
    "enable_bias": True,
}
config = AutoConfig.for_model(**HF_CONFIG)
vocab_size = config.vocab_size
sequence_length = 256
batch_size = 32


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
