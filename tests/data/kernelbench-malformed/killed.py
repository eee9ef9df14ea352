import os
import signal

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    # As the kernel's out-of-memory killer would end a process that asked for too much.
    os.kill(os.getpid(), signal.SIGKILL)


def get_init_inputs():
    return []
