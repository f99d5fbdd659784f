"""``/login`` and ``/logout``: credentials checked by the servers that want them.

See :mod:`seaway.console.security`.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from seaway.console.security import check_csrf, safe_next
from seaway.console.web import Console, Ctx, read_form

__all__ = ["router"]

router = APIRouter()


def _anonymous(request: Request) -> Ctx:
    console: Console = request.app.state.console
    return Ctx(request, console, console.sessions.get(request.cookies.get(console.cookie)), None)


@router.get("/login")
async def login_page(request: Request, next: str = "/") -> Response:
    ctx = _anonymous(request)
    return ctx.render("login.html", target=safe_next(next), error=None, login_required=ctx.console.gate.login_required)


@router.post("/login")
async def login(request: Request) -> Response:
    ctx = _anonymous(request)
    form = await read_form(request)
    headers = request.headers
    check_csrf(ctx.session, form.get("csrf_token") or headers.get("X-CSRF-Token"), headers.get("Origin"),
               headers.get("Sec-Fetch-Site"), headers.get("Host"))
    user, password, target = form.get("username").strip(), form.get("password"), safe_next(form.get("next"))
    if not user:
        return ctx.render("login.html", 400, target=target, error="Enter a user name.", login_required=True)
    if not ctx.console.gate.probed or not ctx.console.gate.login_required:
        await ctx.console.gate.probe()
    refused = await ctx.console.gate.verify(user, password)
    if refused is not None:
        return ctx.render("login.html", 401, target=target, login_required=True,
                          error=f"{refused} refused these credentials.")
    if ctx.session is not None:
        ctx.console.sessions.drop(ctx.session.sid)  # a new id at login: no session fixation
    ctx.session = ctx.console.sessions.new(user, password)
    ctx.new_session = True
    return ctx.redirect(target)


@router.post("/logout")
async def logout(request: Request) -> Response:
    ctx = _anonymous(request)
    form = await read_form(request)
    headers = request.headers
    check_csrf(ctx.session, form.get("csrf_token") or headers.get("X-CSRF-Token"), headers.get("Origin"),
               headers.get("Sec-Fetch-Site"), headers.get("Host"))
    if ctx.session is not None:
        ctx.console.sessions.drop(ctx.session.sid)
    ctx.session = None
    response = ctx.redirect("/login")
    response.delete_cookie(ctx.console.cookie, path="/", secure=ctx.console.settings.https, httponly=True,
                           samesite="strict")
    return response
