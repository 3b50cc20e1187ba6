"""Test server: a folder's files over plain HTTP, as a static web host serves an API's documents.

`python static_files_server.py FOLDER` serves FOLDER's files at their paths (a file without an extension too, as
Spring's `/v3/api-docs`), 404 for any other. Prints `static files listening on http://127.0.0.1:PORT`.
"""

from __future__ import annotations

import sys
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    handler = partial(SimpleHTTPRequestHandler, directory=sys.argv[1])
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        print(f"static files listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
