"""inductor-doctor: a doctor for the PyTorch compile stack (torch.compile, Inductor, Triton, XLA).

Importing this package must stay cheap and must never import torch, triton or torch_xla: the doctor
has to keep working precisely when those are broken.
"""

__version__ = "0.1.0"
