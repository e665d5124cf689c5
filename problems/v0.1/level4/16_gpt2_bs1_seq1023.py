"""GPT-2 (124M) causal-LM logits for a batch of 1 x 1023 token ids."""
import torch
import torch.nn as nn

try:
    from transformers import AutoConfig, AutoModelForCausalLM
except ImportError as e:  # the HuggingFace problems are an optional extra
    raise ImportError("this problem needs transformers, the `hf` extra: pip install kb-data[hf]") from e

REQUIRES = ["transformers"]
QUIRKS = ["pretrained_weights"]

model_name = "gpt2"
HF_MODEL_ID = model_name
# Upstream fetches the config from the Hub (AutoConfig.from_pretrained(model_name)); we write out the
# published checkpoint's values instead, so nothing is downloaded.
HF_CONFIG = {
    "model_type": "gpt2",
    "vocab_size": 50257,
    "n_positions": 1024,
    "n_embd": 768,
    "n_layer": 12,
    "n_head": 12,
    "activation_function": "gelu_new",
    "resid_pdrop": 0.1,
    "embd_pdrop": 0.1,
    "attn_pdrop": 0.1,
    "layer_norm_epsilon": 1e-05,
    "initializer_range": 0.02,
    "bos_token_id": 50256,
    "eos_token_id": 50256,
}
config = AutoConfig.for_model(**HF_CONFIG)
vocab_size = config.vocab_size
sequence_length = 1023
batch_size = 1


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
