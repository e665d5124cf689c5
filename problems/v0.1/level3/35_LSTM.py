"""Six-layer LSTM over a batch-first sequence with random initial states, then a Linear on the last time step."""
import torch
import torch.nn as nn

batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0

QUIRKS = ["random_in_forward"]


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout,
                            bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x, h0=None, c0=None):
        batch_size = x.size(0)
        # the initial states are drawn here, h0 first then c0 (consumes RNG in forward)
        if h0 is None:
            h0 = torch.randn(self.lstm.num_layers, batch_size, self.lstm.hidden_size, device=x.device)
        if c0 is None:
            c0 = torch.randn(self.lstm.num_layers, batch_size, self.lstm.hidden_size, device=x.device)
        out, _ = self.lstm(x, (h0, c0))  # (batch, seq, hidden)
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]
