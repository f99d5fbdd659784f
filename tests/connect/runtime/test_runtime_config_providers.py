"""Config providers: placeholders resolved at start, never in stored configs, statuses or logs."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from seaway.connect.api import ConfigError
from seaway.connect.runtime.config_providers import (
    ConfigTransformer,
    DirectoryConfigProvider,
    EnvVarConfigProvider,
    FileConfigProvider,
)
from seaway.connect.runtime.herder import State
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

from tests.connect.runtime.rt_support import MODULE, PLUGINS, CounterTask, reset_collectors, rt_broker

__all__ = ["rt_broker"]

SECRET = "s3cr3t-Value-42"


def test_providers_and_transformer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    props = tmp_path / "db.properties"
    props.write_text("# comment\ndb.password = " + SECRET + "\nuser:admin\nlong=a\\\n  b\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token").write_text("tok")
    monkeypatch.setenv("RT_ALLOWED", "yes")
    monkeypatch.setenv("RT_DENIED", "no")
    env = EnvVarConfigProvider()
    env.configure({"env.var.allowlist": "RT_ALLOWED"})
    file_provider, dir_provider = FileConfigProvider(), DirectoryConfigProvider()
    file_provider.configure({})
    dir_provider.configure({"allowed.paths": str(tmp_path)})
    transformer = ConfigTransformer({"file": file_provider, "env": env, "dir": dir_provider})
    result = transformer.transform({
        "a": f"${{file:{props}:db.password}}", "b": "${env:RT_ALLOWED}", "c": "${env:RT_DENIED}",
        "d": f"x-${{dir:{tmp_path / 'secrets'}:token}}-y", "e": "${unknown:k}", "f": f"${{dir:{tmp_path}:../etc}}"})
    assert result.data == {"a": SECRET, "b": "yes", "c": "${env:RT_DENIED}", "d": "x-tok-y", "e": "${unknown:k}",
                           "f": f"${{dir:{tmp_path}:../etc}}"}
    assert result.secrets == {SECRET, "yes", "tok"}


def test_file_provider_reads_a_properties_file_as_java_does(tmp_path: Path) -> None:
    """Kafka's FileConfigProvider reads with Properties.load: trailing white space is part of the value,
    ``\\uXXXX`` and ``\\:`` are escapes, a continuation line may start with ``#``."""
    path = tmp_path / "db.properties"
    path.write_text("# comment\npassword = pa ss  \nuser:admin\nlong=a\\\n  #b\nkey\\:x=\\u00e9t\\u00e9\n",
                    encoding="utf-8")
    provider = FileConfigProvider()
    provider.configure({})
    assert provider.get(str(path)).data == {"password": "pa ss  ", "user": "admin", "long": "a#b", "key:x": "été"}
    assert provider.get(str(path), ["password"]).data == {"password": "pa ss  "}
    path.write_text("bad=\\u00zz\n")
    with pytest.raises(ConfigError, match=r"Could not read properties from file .*Malformed"):
        provider.get(str(path))


@pytest.mark.timeout(60)
async def test_secrets_never_reach_configs_statuses_or_logs(
        rt_broker: EmbeddedBroker, tmp_path: Path, topic_name: str, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    reset_collectors()
    caplog.set_level(logging.DEBUG)
    secrets = tmp_path / "secrets.properties"
    secrets.write_text(f"db.password={SECRET}\n")
    monkeypatch.setenv("RT_TOPIC", topic_name)
    placeholder = f"${{file:{secrets}:db.password}}"
    async with EmbeddedConnect(rt_broker.bootstrap, tmp_path, plugins=PLUGINS, worker_props={
            "config.providers": "file,env",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            "config.providers.env.class": "EnvVarConfigProvider"}) as connect:
        herder = connect.herder
        await connect.create_connector("ok", {"connector.class": f"{MODULE}:CounterConnector",
                                              "topic": "${env:RT_TOPIC}", "count": "2", "secret": placeholder})
        connect.consume(topic_name, 2)  # the env placeholder was resolved for the task
        assert CounterTask.started[0]["secret"] == SECRET
        assert (await herder.connector_config("ok"))["secret"] == placeholder
        assert [t.config["secret"] for t in await herder.task_configs("ok")] == [placeholder]
        infos = await herder.validate_connector_config(await herder.connector_config("ok"))
        assert SECRET not in str(infos.to_json())
        await connect.create_connector("leaky", {"connector.class": f"{MODULE}:FailingStartConnector",
                                                 "topic": topic_name, "secret": placeholder})
        failed = await connect.wait_for_status("leaky", State.FAILED, tasks=0)
        assert "cannot start with secret [hidden]" in (failed.connector.trace or "")
        assert SECRET not in str(failed.to_json())
    logged = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert "cannot start with secret" in logged  # the failure was logged...
    assert SECRET not in logged                  # ...without the secret
