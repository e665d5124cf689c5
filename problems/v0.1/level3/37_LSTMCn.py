"""Six-layer LSTM over a batch-first sequence; returns the final cell state c_n of every layer."""
import torch
import torch.nn as nn

batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0

# fc is built (consuming RNG) and even evaluated, but its result is discarded.
QUIRKS = ["unused_parameters"]


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout,
                            bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x, h0, c0):
        out, state = self.lstm(x, (h0, c0))  # out: (batch, seq, hidden)
        out = self.fc(out[:, -1, :])  # computed and discarded
        return state[1]


def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size),
            torch.rand(num_layers, batch_size, hidden_size),
            torch.rand(num_layers, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]
