"""Linear, dropout (identity in eval mode), mean over the batch, then softmax over features."""
import torch
import torch.nn as nn

batch_size = 128
in_features = 4096
out_features = 4096
dropout_p = 0.2


class Model(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        x = self.matmul(x)
        x = self.dropout(x)  # the harness runs .eval(), so this is the identity
        x = torch.mean(x, dim=0, keepdim=True)
        x = torch.softmax(x, dim=1)
        return x


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]


OP_TYPE = "fused"
SUPPORTED_PRECISIONS = ["fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["RTX3090", "H100", "B200"]
