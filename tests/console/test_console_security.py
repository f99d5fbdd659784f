"""The console with HTTP Basic authentication on Connect and the registry, and in read-only mode.

The worker (BasicAuthSecurityRestExtension) and the registry (``authentication.method=BASIC``)
share one user, alice; the console has no credentials of its own for them, so it must make every
visitor log in and call them with the visitor's credentials. Checked: an anonymous browser gets
the login page, never a page of data; a wrong password is refused by the servers themselves; a
POST without the session's CSRF token, or from another origin, is refused and changes nothing;
secrets in a connector's config never appear in any page's HTML (list, page, status, offsets,
edit form, live validation), and an edit that leaves them masked keeps them; a read-only console
shows no action and refuses every change.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.console.console_support import ConsoleProcess, Stack, browser_page, csrf_of, start_stack

pytestmark = pytest.mark.timeout(240)

USER, PASSWORD = "alice", "alice-pw-4711"
BASIC_AUTH = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
SECRETS = ("Sup3r-Secret-Pw", "jaas-Secret-Pw", "info-Secret-Pw")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    d = tmp_path_factory.mktemp("console-secure")
    users = d / "connect.password"
    users.write_text(f"{USER}: {PASSWORD}\n")
    jetty = d / "registry.users"
    jetty.write_text(f"{USER}: {PASSWORD},admin\n")
    jaas = d / "jaas.conf"
    jaas.write_text(f"""KafkaConnect {{
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required file="{users}";
}};
SchemaRegistry-Props {{
  org.eclipse.jetty.jaas.spi.PropertyFileLoginModule required file="{jetty}";
}};
""")
    with start_stack(d, "console-secure", avro=False,
                     worker_extra={"rest.extension.classes": BASIC_AUTH, "java.security.auth.login.config": str(jaas)},
                     registry_overrides=("authentication.method=BASIC", "authentication.realm=SchemaRegistry-Props",
                                         f"java.security.auth.login.config={jaas}")) as s:
        yield s


@pytest.fixture(scope="module")
def console(stack: Stack) -> Iterator[ConsoleProcess]:
    with ConsoleProcess(*stack.console_args()) as c:
        yield c


def _login(client: httpx.Client, password: str = PASSWORD) -> httpx.Response:
    token = csrf_of(client, "/login")
    return client.post("/login", data={"csrf_token": token, "username": USER, "password": password, "next": "/"})


def test_anonymous_browser_is_sent_to_log_in(console: ConsoleProcess) -> None:
    with browser_page() as page:
        for path in ("/", "/connectors", "/topics", "/groups", "/schemas", "/health", "/topics/x/messages"):
            page.goto(console.url + path)
            assert re.search(r"/login\?next=", page.url), (path, page.url)
            assert page.locator("h1").inner_text() == "Log in"
        page.fill("#username", USER)
        page.fill("#password", "wrong")
        page.get_by_role("button", name="Log in").click()
        page.locator(".error-box", has_text="refused these credentials").wait_for()
        assert "/login" in page.url
        page.fill("#username", USER)
        page.fill("#password", PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(console.url + "/topics/x/messages")  # back where the login was asked for
        assert "topic x does not exist" in page.locator(".error-box").inner_text()
        page.goto(console.url + "/connectors")
        assert page.locator("h1").inner_text() == "Connectors"
        cookie = next(c for c in page.context.cookies() if c["name"] == "seaway_console")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"


def test_scripts_use_basic_auth_and_anonymous_posts_get_nothing(console: ConsoleProcess) -> None:
    with httpx.Client(base_url=console.url, timeout=30) as anonymous:
        page = anonymous.get("/connectors")
        assert page.status_code == 303 and page.headers["location"].startswith("/login?next=")
        posted = anonymous.post("/topics", data={"name": "anon-topic"})
        assert posted.status_code == 401
    with httpx.Client(base_url=console.url, timeout=30, auth=(USER, PASSWORD)) as script:
        assert script.get("/connectors").status_code == 200
    with httpx.Client(base_url=console.url, timeout=30, auth=(USER, "wrong")) as wrong:
        assert wrong.get("/connectors").status_code == 401


def test_csrf_less_and_cross_site_posts_are_refused(stack: Stack, console: ConsoleProcess) -> None:
    from confluent_kafka.admin import AdminClient

    with httpx.Client(base_url=console.url, timeout=30) as client:
        assert _login(client).status_code == 303
        refused = client.post("/topics", data={"name": "csrf-topic", "partitions": "1"})
        assert refused.status_code == 403 and "CSRF" in refused.text
        token = csrf_of(client, "/topics/new")
        wrong = client.post("/topics", data={"name": "csrf-topic", "csrf_token": token[:-2] + "xx"})
        assert wrong.status_code == 403
        foreign = client.post("/topics", data={"name": "csrf-topic", "csrf_token": token},
                              headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403 and "another origin" in foreign.text
        cross = client.post("/topics", data={"name": "csrf-topic", "csrf_token": token},
                            headers={"Sec-Fetch-Site": "cross-site"})
        assert cross.status_code == 403
        other = httpx.Client(base_url=console.url, timeout=30)  # another session's token is not this one's
        try:
            assert _login(other).status_code == 303
            stolen = csrf_of(other, "/topics/new")
        finally:
            other.close()
        assert client.post("/topics", data={"name": "csrf-topic", "csrf_token": stolen}).status_code == 403
        assert "csrf-topic" not in AdminClient({"bootstrap.servers": stack.bootstrap}).list_topics(timeout=10).topics
        made = client.post("/topics", data={"name": "csrf-topic", "partitions": "1", "csrf_token": token})
        assert made.status_code == 303, made.text[:300]
    assert "csrf-topic" in AdminClient({"bootstrap.servers": stack.bootstrap}).list_topics(timeout=10).topics


def test_secrets_stay_masked_in_every_page(stack: Stack, console: ConsoleProcess, tmp_path: Path) -> None:
    source = tmp_path / "secret-in.txt"
    source.write_text("a\nb\n")
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": "secret-topic",
              "connection.password": SECRETS[0],
              "producer.override.sasl.jaas.config": f'PlainLoginModule required username="u" password="{SECRETS[1]}";',
              "value.converter.basic.auth.user.info": f"user:{SECRETS[2]}",
              "producer.override.ssl.truststore.location": "/etc/ca.pem"}
    made = httpx.put(f"{stack.connect_url}/connectors/secretive/config", json=config, auth=(USER, PASSWORD), timeout=30)
    assert made.status_code == 201, made.text
    pages: dict[str, str] = {}
    with httpx.Client(base_url=console.url, timeout=30) as client:
        assert _login(client).status_code == 303
        for path in ("/", "/connectors", "/connectors/connect/secretive", "/connectors/connect/secretive/status",
                     "/connectors/connect/secretive/offsets", "/connectors/connect/secretive/edit",
                     "/topics", "/health/cards"):
            answer = client.get(path)
            assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
            pages[path] = answer.text
        token = csrf_of(client, "/connectors/connect/secretive/edit")
        edit = client.get("/connectors/connect/secretive/edit").text
        form = _form_fields(edit)
        validation = client.post("/connectors/connect/validate", data={**form, "csrf_token": token})
        pages["validate"] = validation.text
        assert validation.status_code == 200
        # an edit that leaves the masked fields as they are keeps the stored secrets
        saved = client.post("/connectors/connect/save", data={**form, "csrf_token": token, "cfg.batch.size": "10"})
        assert saved.status_code == 303, saved.text[:500]
        pages["after save"] = client.get("/connectors/connect/secretive").text
    for where, html in pages.items():
        for secret in SECRETS:
            assert secret not in html, f"{secret} in the HTML of {where}"
    assert "[hidden]" in pages["/connectors/connect/secretive"]
    assert "/etc/ca.pem" in pages["/connectors/connect/secretive"]  # a location is not a secret
    stored = httpx.get(f"{stack.connect_url}/connectors/secretive/config", auth=(USER, PASSWORD), timeout=30).json()
    assert stored["connection.password"] == SECRETS[0]
    assert SECRETS[1] in stored["producer.override.sasl.jaas.config"]
    assert stored["value.converter.basic.auth.user.info"] == f"user:{SECRETS[2]}"
    assert stored["batch.size"] == "10"


def _form_fields(html: str) -> dict[str, str]:
    """The inputs of the connector form as a browser would submit them (text inputs, the extra textarea)."""
    form = html[html.index('id="connector-form"'):html.index("</form>", html.index('id="connector-form"'))]
    fields = {m[0]: m[1] for m in re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', form)}
    extra = re.search(r'<textarea name="extra"[^>]*>(.*?)</textarea>', form, re.S)
    fields["extra"] = _unescape(extra.group(1)) if extra else ""
    return {k: _unescape(v) for k, v in fields.items() if k != "csrf_token"}


def _unescape(text: str) -> str:
    import html

    return html.unescape(text)


def test_read_only_console_shows_and_changes_nothing(stack: Stack) -> None:
    with ConsoleProcess(*stack.console_args(), "--read-only") as console, \
            httpx.Client(base_url=console.url, timeout=30) as client:
        assert _login(client).status_code == 303
        page = client.get("/connectors/connect/secretive")
        assert page.status_code == 200 and "read-only" in page.text
        assert "/action" not in page.text and "Edit config" not in page.text
        token = csrf_of(client, "/topics")
        refused = client.post("/connectors/connect/secretive/action", data={"action": "delete", "csrf_token": token})
        assert refused.status_code == 403 and "read-only" in refused.text
        status = httpx.get(f"{stack.connect_url}/connectors/secretive/status", auth=(USER, PASSWORD), timeout=30)
        assert status.status_code == 200
