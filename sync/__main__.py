"""python -m sync: the same CLI as flagtree-sync."""
from .cli import main

main()
