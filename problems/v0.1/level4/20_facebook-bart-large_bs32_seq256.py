"""BART-large decoder-only (BartForCausalLM) logits for a batch of 32 x 256 token ids."""
import torch
import torch.nn as nn

try:
    from transformers import AutoConfig, AutoModelForCausalLM
except ImportError as e:  # the HuggingFace problems are an optional extra
    raise ImportError("this problem needs transformers, the `hf` extra: pip install kb-data[hf]") from e

REQUIRES = ["transformers"]
QUIRKS = ["pretrained_weights"]

model_name = "facebook/bart-large"
HF_MODEL_ID = model_name
# Upstream fetches the config from the Hub (AutoConfig.from_pretrained(model_name)); we write out the
# published checkpoint's values instead, so nothing is downloaded.
HF_CONFIG = {
    "model_type": "bart",
    "vocab_size": 50265,
    "d_model": 1024,
    "encoder_layers": 12,
    "decoder_layers": 12,
    "encoder_attention_heads": 16,
    "decoder_attention_heads": 16,
    "encoder_ffn_dim": 4096,
    "decoder_ffn_dim": 4096,
    "max_position_embeddings": 1024,
    "activation_function": "gelu",
    "dropout": 0.1,
    "attention_dropout": 0.1,
    "activation_dropout": 0.1,
    "init_std": 0.02,
    "scale_embedding": False,
    "pad_token_id": 1,
    "bos_token_id": 0,
    "eos_token_id": 2,
    "decoder_start_token_id": 2,
    "forced_eos_token_id": 2,
    "is_encoder_decoder": True,
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
        # Only the decoder stack of the seq2seq checkpoint is used; its cross-attention sublayers are in the
        # state_dict but unused (there is no encoder output).
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
