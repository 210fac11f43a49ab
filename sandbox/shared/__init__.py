"""What the host side and the inside both import (the only modules of the sandbox package `inside/` may import
besides its own): the wire format, tree types, the output mark, mesh layouts, the gradient transform, charged
time."""
