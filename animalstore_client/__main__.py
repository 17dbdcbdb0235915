"""``python -m animalstore_client``: the ``animalstore`` command line."""

import sys

from animalstore_client._cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m animalstore_client"))
