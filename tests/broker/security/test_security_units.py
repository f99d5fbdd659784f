"""The security building blocks on their own: SCRAM (RFC 7677's exchange), the authorizer's
rules (Kafka's StandardAuthorizer), DN mapping rules, JAAS values, ACL filters. No server."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from seaway.broker.security import scram as scram_module
from seaway.broker.security.acl import (
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
)
from seaway.broker.security.authorizer import StandardAuthorizer
from seaway.broker.security.jaas import parse_jaas
from seaway.broker.security.principal import KafkaPrincipal, NoMatchingRuleError, SslPrincipalMapper
from seaway.broker.security.sasl import AuthenticationFailed, SaslSession, SaslState
from seaway.broker.security.scram import (
    ScramError,
    ScramMechanism,
    ScramServer,
    credential_from_password,
    credential_from_salted_password,
    salted_password,
)

SHA256 = ScramMechanism.SCRAM_SHA_256
SHA512 = ScramMechanism.SCRAM_SHA_512


# -- SCRAM ---------------------------------------------------------------------------------

def test_scram_sha256_matches_rfc7677_example(monkeypatch: pytest.MonkeyPatch) -> None:
    """RFC 7677 section 3: user "user", password "pencil", the server's messages byte for byte."""
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = credential_from_salted_password(SHA256, salt, salted_password(SHA256, "pencil", salt, 4096), 4096)
    monkeypatch.setattr(scram_module, "_server_nonce", lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    server = ScramServer(SHA256, lambda user: credential if user == "user" else None)
    first = server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first == b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    final = server.evaluate(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                            b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.authorization_id == "user"


def _client_final(mechanism: ScramMechanism, password: str, client_first_bare: str, server_first: str,
                  channel: str = "biws") -> str:
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    salted = salted_password(mechanism, password, base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = mechanism.hmac(salted, b"Client Key")
    without_proof = f"c={channel},r={fields['r']}"
    auth = f"{client_first_bare},{server_first},{without_proof}".encode()
    signature = mechanism.hmac(mechanism.hash(client_key), auth)
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    return f"{without_proof},p={base64.b64encode(proof).decode()}"


@pytest.mark.parametrize("mechanism", [SHA256, SHA512])
def test_scram_full_exchange_and_wrong_password(mechanism: ScramMechanism) -> None:
    credential = credential_from_password(mechanism, "s3cret", 4096)
    for password, ok in (("s3cret", True), ("wrong", False)):
        server = ScramServer(mechanism, lambda user: credential if user == "alice" else None)
        first = server.evaluate(b"n,,n=alice,r=abcdef").decode()
        final = _client_final(mechanism, password, "n=alice,r=abcdef", first)
        if ok:
            answer = server.evaluate(final.encode())
            expected = hmac.new(credential.server_key, f"n=alice,r=abcdef,{first},{final.rsplit(',p=', 1)[0]}"
                                .encode(), mechanism.hash_name).digest()
            assert answer == b"v=" + base64.b64encode(expected)
        else:
            with pytest.raises(ScramError):
                server.evaluate(final.encode())


@pytest.mark.parametrize("first", [
    b"n,,n=nobody,r=abc",  # unknown user
    b"y,,n=alice,r=abc",  # channel binding flag other than 'n'
    b"p=tls-unique,,n=alice,r=abc",  # channel binding asked for
    b"n,a=bob,n=alice,r=abc",  # authzid other than the user
    b"n,,m=ext,n=alice,r=abc",  # a mandatory extension
    b"n,,n=alice,r=abc,tokenauth=true",  # delegation token
    b"\xff\xfe",  # not UTF-8
])
def test_scram_refuses_bad_first_messages(first: bytes) -> None:
    credential = credential_from_password(SHA256, "pw", 4096)
    with pytest.raises(ScramError):
        ScramServer(SHA256, lambda user: credential if user == "alice" else None).evaluate(first)


def test_scram_final_message_must_bind_the_gs2_header_and_nonce() -> None:
    credential = credential_from_password(SHA256, "pw", 4096)
    for tamper in ("channel", "nonce"):
        server = ScramServer(SHA256, lambda user: credential)
        first = server.evaluate(b"n,,n=alice,r=abc").decode()
        if tamper == "channel":
            final = _client_final(SHA256, "pw", "n=alice,r=abc", first, channel=base64.b64encode(b"y,,").decode())
        else:
            final = _client_final(SHA256, "pw", "n=alice,r=abc", first.replace("r=abc", "r=abd"))
        with pytest.raises(ScramError):
            server.evaluate(final.encode())


def test_scram_credential_is_kafkas_stored_and_server_key() -> None:
    salted = hashlib.pbkdf2_hmac("sha512", b"pw", b"salt", 4096)
    credential = credential_from_salted_password(SHA512, b"salt", salted, 4096)
    client_key = hmac.new(salted, b"Client Key", "sha512").digest()
    assert credential.stored_key == hashlib.sha512(client_key).digest()
    assert credential.server_key == hmac.new(salted, b"Server Key", "sha512").digest()
    assert "key" not in repr(credential).lower().replace("scramcredential", "")


# -- SASL state machine --------------------------------------------------------------------

def test_plain_session_messages_are_kafkas() -> None:
    session = SaslSession(("PLAIN",), {"alice": "pw"}, lambda m, u: None)
    assert session.accepts(18) and session.accepts(17) and not session.accepts(0)
    assert session.handshake("PLAIN", 1) and session.state is SaslState.AUTHENTICATE
    with pytest.raises(AuthenticationFailed, match=r"^Authentication failed: Invalid username or password$"):
        session.authenticate(b"\x00alice\x00nope")
    assert session.failed
    session = SaslSession(("PLAIN",), {"alice": "pw"}, lambda m, u: None)
    session.handshake("PLAIN", 0)
    assert session.raw_tokens
    assert session.authenticate(b"\x00alice\x00pw") == b"" and session.complete
    assert session.principal == KafkaPrincipal("User", "alice")


def test_unknown_mechanism_fails_the_session() -> None:
    session = SaslSession(("SCRAM-SHA-512",), {}, lambda m, u: None)
    assert not session.handshake("GSSAPI", 1) and session.failed


# -- authorizer ----------------------------------------------------------------------------

def acl(name: str, op: Operation, permission: Permission = Permission.ALLOW, *, principal: str = "User:alice",
        pattern: PatternType = PatternType.LITERAL, host: str = "*",
        rtype: ResourceType = ResourceType.TOPIC) -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, op, permission)


ALICE = KafkaPrincipal("User", "alice")
BOB = KafkaPrincipal("User", "bob")


def decide(acls: list[AclBinding], op: Operation, name: str, who: KafkaPrincipal = ALICE, host: str = "10.0.0.1",
           *, allow_if_no_acl: bool = False, rtype: ResourceType = ResourceType.TOPIC) -> bool:
    authorizer = StandardAuthorizer({"User:admin"}, allow_if_no_acl)
    authorizer.set_acls(acls)
    return authorizer.authorize(who, host, op, rtype, name)


def test_literal_prefixed_and_wildcard_patterns() -> None:
    acls = [acl("orders", Operation.READ), acl("pay-", Operation.WRITE, pattern=PatternType.PREFIXED),
            acl("*", Operation.DESCRIBE, principal="User:bob")]
    assert decide(acls, Operation.READ, "orders")
    assert not decide(acls, Operation.READ, "orders2")  # literal means exactly that name
    assert decide(acls, Operation.WRITE, "pay-eu") and decide(acls, Operation.WRITE, "pay-")
    assert not decide(acls, Operation.WRITE, "pay")
    assert decide(acls, Operation.DESCRIBE, "anything", BOB)
    assert not decide(acls, Operation.READ, "anything", BOB)


def test_deny_wins_over_allow_and_implies_nothing() -> None:
    acls = [acl("pay-", Operation.ALL, pattern=PatternType.PREFIXED),
            acl("pay-secret", Operation.READ, Permission.DENY)]
    assert decide(acls, Operation.WRITE, "pay-secret")
    assert not decide(acls, Operation.READ, "pay-secret")
    assert decide(acls, Operation.DESCRIBE, "pay-secret")  # a DENY on READ does not deny DESCRIBE
    wildcard_deny = [acl("t", Operation.ALL), acl("*", Operation.ALL, Permission.DENY, principal="User:*")]
    assert not decide(wildcard_deny, Operation.READ, "t")


def test_allows_imply_describe_and_describe_configs() -> None:
    for op in (Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER):
        assert decide([acl("t", op)], Operation.DESCRIBE, "t"), op
    assert not decide([acl("t", Operation.CREATE)], Operation.DESCRIBE, "t")
    assert decide([acl("t", Operation.ALTER_CONFIGS)], Operation.DESCRIBE_CONFIGS, "t")
    assert not decide([acl("t", Operation.DESCRIBE)], Operation.READ, "t")


def test_hosts_principals_super_users_and_the_default_rule() -> None:
    acls = [acl("t", Operation.READ, host="10.0.0.1")]
    assert decide(acls, Operation.READ, "t", host="10.0.0.1")
    assert not decide(acls, Operation.READ, "t", host="10.0.0.2")
    assert decide([acl("t", Operation.READ, principal="User:*")], Operation.READ, "t", BOB)
    assert decide(acls, Operation.READ, "t", KafkaPrincipal("User", "admin"))  # super user
    # no ACL applies to "other": allow.everyone.if.no.acl.found decides
    assert not decide(acls, Operation.READ, "other")
    assert decide(acls, Operation.READ, "other", allow_if_no_acl=True)
    # an ACL applies to "t" (for someone else): the default rule no longer does
    assert not decide(acls, Operation.READ, "t", BOB, allow_if_no_acl=True)


def test_authorize_by_resource_type_is_kafkas() -> None:
    authorizer = StandardAuthorizer()
    authorizer.set_acls([acl("t-", Operation.WRITE, pattern=PatternType.PREFIXED)])
    assert authorizer.authorize_by_resource_type(ALICE, "h", Operation.WRITE, ResourceType.TOPIC)
    assert not authorizer.authorize_by_resource_type(BOB, "h", Operation.WRITE, ResourceType.TOPIC)
    authorizer.set_acls([acl("t-", Operation.WRITE, pattern=PatternType.PREFIXED),
                         acl("t", Operation.WRITE, Permission.DENY, pattern=PatternType.PREFIXED)])
    assert not authorizer.authorize_by_resource_type(ALICE, "h", Operation.WRITE, ResourceType.TOPIC)


def test_authorized_operations_bitfield() -> None:
    authorizer = StandardAuthorizer()
    authorizer.set_acls([acl("t", Operation.READ)])
    bits = authorizer.authorized_operations(ALICE, "h", ResourceType.TOPIC, "t")
    assert bits == (1 << Operation.READ) | (1 << Operation.DESCRIBE)


def test_acl_changes_invalidate_cached_decisions() -> None:
    authorizer = StandardAuthorizer()
    authorizer.set_acls([acl("t", Operation.READ)])
    assert authorizer.authorize(ALICE, "h", Operation.READ, ResourceType.TOPIC, "t")
    authorizer.set_acls([])
    assert not authorizer.authorize(ALICE, "h", Operation.READ, ResourceType.TOPIC, "t")


def test_acl_filters_match_as_kafkas() -> None:
    literal, prefixed, wild = acl("orders", Operation.READ), acl("ord", Operation.READ, pattern=PatternType.PREFIXED), \
        acl("*", Operation.READ)
    any_filter = AclFilter(ResourceType.ANY, None, PatternType.ANY, None, None, Operation.ANY, Permission.ANY)
    assert all(any_filter.matches(a) for a in (literal, prefixed, wild))
    match = AclFilter(ResourceType.TOPIC, "orders", PatternType.MATCH, None, None, Operation.ANY, Permission.ANY)
    assert all(match.matches(a) for a in (literal, prefixed, wild))
    exact = AclFilter(ResourceType.TOPIC, "orders", PatternType.LITERAL, None, None, Operation.ANY, Permission.ANY)
    assert exact.matches(literal) and not exact.matches(prefixed) and not exact.matches(wild)
    assert AclFilter(ResourceType.TOPIC, None, PatternType.UNKNOWN, None, None, Operation.ANY,
                     Permission.ANY).invalid()


def test_binding_validation_messages() -> None:
    assert acl("x", Operation.ANY).validation_error() == "Invalid operation ANY"
    assert acl("", Operation.READ).validation_error() == "Resource name should not be empty"
    assert "kafka-cluster" in str(acl("c", Operation.ALTER, rtype=ResourceType.CLUSTER).validation_error())
    assert "colon" in str(acl("t", Operation.READ, principal="alice").validation_error())
    assert acl("t", Operation.READ).validation_error() is None


# -- principals and JAAS --------------------------------------------------------------------

def test_ssl_principal_mapping_rules() -> None:
    dn = "CN=alice,OU=ServiceUsers,O=Acme,C=NL"
    assert SslPrincipalMapper().name(dn) == dn
    mapper = SslPrincipalMapper(r"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/U, RULE:^CN=([^,]*),.*$/$1@acme/L, DEFAULT")
    assert mapper.name(dn) == "ALICE"
    assert mapper.name("CN=Bob,OU=People,O=Acme") == "bob@acme"
    with pytest.raises(NoMatchingRuleError):
        SslPrincipalMapper(r"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/").name("CN=bob,OU=People")
    with pytest.raises(ValueError):
        SslPrincipalMapper("NOT A RULE")


def test_jaas_parsing() -> None:
    entry = parse_jaas('org.apache.kafka.common.security.plain.PlainLoginModule required\n'
                       '  username="admin" password="a;b" user_admin="a;b" user_alice="x\\"y";')
    assert entry.flag == "required" and entry.plain_users() == {"admin": "a;b", "alice": 'x"y'}
    for bad in ("", "Module required", "Module maybe;", "Module required a=;",
                "A required; B required;"):
        with pytest.raises(ValueError):
            parse_jaas(bad)
