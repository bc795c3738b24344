"""Per-(token, head) blend of two head vectors by a per-(head, token) gate: an elementwise problem whose first
version launches one program per (token, head) on a 2-D grid (the shape of many attention-side kernels)."""

import torch
import torch.nn as nn

CASES = [{"T": 8192, "H": 16, "D": 128}]
SMOKE_CASES = [{"T": 37, "H": 3, "D": 64}, {"T": 5, "H": 2, "D": 80}]


class Model(nn.Module):
    def forward(self, a, b, gate):  # a, b: [T, H, D]; gate: [H, T]
        g = torch.sigmoid(gate).transpose(0, 1).unsqueeze(-1)
        return a * g + b * (1.0 - g), gate.sum() * 0 + torch.sigmoid(gate)


def get_inputs(T=64, H=4, D=128):
    return [torch.randn(T, H, D), torch.randn(T, H, D), torch.randn(H, T)]


def get_init_inputs(**case):
    return []


def bytes_moved(T=64, H=4, D=128):
    return 4.0 * (3 * T * H * D + 2 * T * H)
