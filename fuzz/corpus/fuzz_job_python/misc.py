import os, torch.utils.checkpoint as ckpt
from . import x as y
from m import *
def main(path=default_path()):
    for name in sorted(os.listdir(path)):
        print([load(x) for x in names])
    return ckpt.checkpoint(fn, use_reentrant=False)
@dataclass(frozen=True)
class C(Base):
    x: int = field(default=3)
f(a=None, b=-3, c=0x1F, d=(1, 2), **kw)  # sparkdoc: ignore L3
