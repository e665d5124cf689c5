"""Six-layer bidirectional LSTM over a batch-first sequence, then a Linear on the last time step."""
import torch
import torch.nn as nn

batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout,
                            bidirectional=True)
        self.fc = nn.Linear(hidden_size * 2, output_size)

    def forward(self, x, h0, c0):
        out, _ = self.lstm(x, (h0, c0))  # (batch, seq, 2 * hidden)
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size),
            torch.rand(num_layers * 2, batch_size, hidden_size),
            torch.rand(num_layers * 2, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]
