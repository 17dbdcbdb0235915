"""``python -m animalstore_client``: the ``animalstore`` command line."""

from animalstore_client._cli import run

if __name__ == "__main__":
    run(prog="python -m animalstore_client")
