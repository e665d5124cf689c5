"""BigBird-RoBERTa-base causal-LM head logits for a batch of 1 x 4095 token ids."""
import torch
import torch.nn as nn

try:
    from transformers import AutoConfig, AutoModelForCausalLM
except ImportError as e:  # the HuggingFace problems are an optional extra
    raise ImportError("this problem needs transformers, the `hf` extra: pip install kb-data[hf]") from e

REQUIRES = ["transformers"]
QUIRKS = ["pretrained_weights"]

model_name = "google/bigbird-roberta-base"
HF_MODEL_ID = model_name
# Upstream fetches the config from the Hub (AutoConfig.from_pretrained(model_name)); we write out the
# published checkpoint's values instead, so nothing is downloaded.
HF_CONFIG = {
    "model_type": "big_bird",
    "vocab_size": 50358,
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "hidden_act": "gelu_new",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 4096,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "attention_type": "block_sparse",
    "block_size": 64,
    "num_random_blocks": 3,
    "use_bias": True,
    "rescale_embeddings": False,
    "pad_token_id": 0,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "sep_token_id": 66,
}
config = AutoConfig.for_model(**HF_CONFIG)
vocab_size = config.vocab_size
sequence_length = 4095
batch_size = 1


class Model(nn.Module):
    def __init__(self, model_name, config):
        super().__init__()
        self.model_name = model_name
        self.config = config
        # Upstream loads the pretrained checkpoint (from_pretrained); we build the same architecture
        # with random weights, so numbers agree only through a state_dict copy.
        # The config does not set is_decoder, so the encoder runs bidirectionally (transformers only warns).
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
