"""python -m sync: the same CLI as flagtree-sync."""
from sync.cli import main

main()
