"""``/docs`` for Seaway's REST apps (Connect worker, schema registry), working offline.

FastAPI's default ``/docs`` page loads Swagger UI's JavaScript and CSS from a CDN, so on a
machine without internet access (a lab, an air-gapped cluster, a train) it is a blank page.
Here the page loads them from the app itself: the assets come from the pinned
``fastapi-offline`` wheel (Swagger UI 5, which renders the OpenAPI 3.1 documents FastAPI
writes), served read-only under ``<path>/assets``. Nothing is vendored by hand.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

__all__ = ["install_swagger_ui"]

_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png")


def install_swagger_ui(app: FastAPI, title: str, path: str = "/docs", openapi_url: str = "/openapi.json") -> None:
    """Serve Swagger UI at ``path`` with its assets under ``<path>/assets`` (left out of the OpenAPI)."""
    directory = files("fastapi_offline") / "static"
    missing = [name for name in _ASSETS if not (directory / name).is_file()]
    if missing:  # a broken install: say what is wrong instead of serving a blank page
        raise RuntimeError(f"fastapi-offline's Swagger UI assets are missing: {', '.join(missing)}")
    assets = f"{path}/assets"
    app.mount(assets, StaticFiles(directory=str(directory)), name="swagger-ui-assets")

    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=openapi_url, title=f"{title} - Swagger UI",
                                   swagger_js_url=f"{assets}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{assets}/swagger-ui.css",
                                   swagger_favicon_url=f"{assets}/favicon.png")

    app.add_api_route(path, swagger_ui, methods=["GET"], include_in_schema=False)
