import re

import pytest

from graphsite.errors import ConfigError
from graphsite.labels import check_domain, check_label, subdomain_of
from graphsite.publisher.names import LONGEST_NAME, check_length, draw_name


@pytest.mark.parametrize("name", ["a", "graph-eng-0a1b2c", "x" * 63, "9lives", "Graph-Eng-1"])
def test_valid_labels_pass_lower_cased(name):
    assert check_label(name) == name.lower()


@pytest.mark.parametrize("name", ["", "-a", "a-", "a_b", "a.b", "x" * 64, "ab--c", "é", "a b", "../etc"])
def test_invalid_labels_are_refused_with_the_flag_named(name):
    with pytest.raises(ConfigError) as info:
        check_label(name)
    assert info.value.message.startswith("--subdomain:")


@pytest.mark.parametrize("name, label", [("xn--bcher-kva", "xn--bcher-kva"), ("XN--Mnchen-3YA", "xn--mnchen-3ya"),
                                         ("xn--9ca", "xn--9ca")])
def test_idna_labels_pass_when_they_decode_and_encode_back_to_themselves(name, label):
    assert check_label(name) == label


@pytest.mark.parametrize("name, why", [
    ("xn--zz", "'xn--zz' starts with xn-- but is not valid IDNA: 'zz' is not Punycode (it decodes to nothing)"),
    ("xn--ls8h", "'xn--ls8h' starts with xn-- but is not valid IDNA: it decodes to '\U0001f4a9', which IDNA "
                 "does not allow"),
    ("xn--a", "'xn--a' starts with xn-- but is not valid IDNA: it decodes to '\\x80', which IDNA does not allow"),
    ("xn---bbb", "'xn---bbb' starts with xn-- but is not valid IDNA: it decodes to '\u056d', whose IDNA form is "
                 "'xn--bbb'"),
])
def test_an_invalid_idna_label_is_refused_naming_it_and_why(name, why):
    with pytest.raises(ConfigError) as info:
        check_label(name)
    assert info.value.message.startswith(f"--subdomain: {why}")


def test_other_labels_with_dashes_in_positions_3_and_4_stay_reserved():
    with pytest.raises(ConfigError, match=r"'ab--c' has '--' in positions 3-4.*only xn-- labels"):
        check_label("ab--c")


@pytest.mark.parametrize("name, hint", [("bücher", "use 'xn--bcher-kva'"), ("Bücher", "use 'xn--bcher-kva'"),
                                        ("é", "use 'xn--9ca'")])
def test_a_unicode_name_is_refused_with_its_idna_form_in_the_hint(name, hint):
    with pytest.raises(ConfigError) as info:
        check_label(name)
    assert info.value.message.startswith(f"--subdomain: {name!r} is not ASCII")
    assert f"hint: {hint}, the IDNA form of" in info.value.message


@pytest.mark.parametrize("name, why", [("😀", "and this name has none"),
                                       ("bü.cher", "its IDNA form 'xn--b-eha.cher' is not one DNS label")])
def test_a_unicode_name_without_a_one_label_idna_form_says_so(name, why):
    with pytest.raises(ConfigError, match=why):
        check_label(name)


def test_domains_are_checked_label_by_label():
    assert check_domain("HHdevs.Space.") == "hhdevs.space"
    assert check_domain("xn--bcher-kva.example") == "xn--bcher-kva.example"
    with pytest.raises(ConfigError):
        check_domain("localhost")
    with pytest.raises(ConfigError):
        check_domain("bad_label.space")


def test_draw_gives_prefix_and_six_hex():
    name = draw_name("graph-eng", lambda _: False)
    assert re.fullmatch(r"graph-eng-[0-9a-f]{6}", name)


def test_a_taken_name_is_drawn_again():
    tokens = iter(["aaaaaa", "aaaaaa", "bbbbbb"])
    asked = []

    def taken(name):
        asked.append(name)
        return name.endswith("aaaaaa")

    assert draw_name("p", taken, token=lambda n: next(tokens)) == "p-bbbbbb"
    assert asked == ["p-aaaaaa", "p-aaaaaa", "p-bbbbbb"]


def test_drawing_gives_up_with_a_clear_error_when_everything_is_taken():
    with pytest.raises(ConfigError, match="all taken"):
        draw_name("p", lambda _: True)


@pytest.mark.parametrize("length", [42, 63])
def test_a_valid_label_too_long_for_swarm_config_names_says_the_limit_and_its_length(length):
    name = "s" * length
    assert check_label(name) == name  # a valid DNS label: only Swarm's limit refuses it
    with pytest.raises(ConfigError) as info:
        check_length(name)
    message, hint = info.value.message.split("\n  hint: ")
    assert message == (f"--subdomain: {name!r} has {length} characters, more than the 41 a deployment name may "
                       "have: Swarm refuses config names over 64 characters, and a deployment's Caddyfile is the "
                       f"config NAME-caddyfile-<12 hex> ({length + 23} characters for this name)")
    assert hint.startswith("choose a name of at most 41 characters")


def test_a_name_of_41_characters_fits():
    assert LONGEST_NAME == 41
    assert check_length("s" * 41) == "s" * 41


def test_deploy_refuses_a_name_too_long_at_its_name_step(production, tmp_path):
    from graphsite.usecases.deploy import DeployRequest, choose_subdomain

    request = DeployRequest(source=tmp_path / "report.md", subdomain="s" * 42 + ".hhdevs.space")
    with pytest.raises(ConfigError, match="has 42 characters, more than the 41"):
        choose_subdomain(production, request, clients=None)  # before any system is asked


def test_a_prefix_whose_names_would_be_too_long_is_refused_with_its_own_limit():
    assert re.fullmatch("p" * 34 + r"-[0-9a-f]{6}", draw_name("p" * 34, lambda _: False))
    with pytest.raises(ConfigError) as info:
        draw_name("p" * 35, lambda _: False)
    assert info.value.message.startswith(f"site.prefix: {'p' * 35!r} has 35 characters, so its names "
                                         "(PREFIX-<6 hex>) would have 42, more than the 41")
    assert info.value.message.endswith("hint: use a prefix of at most 34 characters")


def test_a_prefix_that_cannot_make_a_label_is_refused():
    with pytest.raises(ConfigError, match="site.prefix"):
        draw_name("bad_prefix", lambda _: False)


@pytest.mark.parametrize("name", ["gs-x", "GS-X", "gs-x.hhdevs.space", "GS-X.HHdevs.Space", " gs-x ",
                                  "gs-x.hhdevs.space."])
def test_a_name_is_the_subdomain_or_its_fqdn_in_any_case(production, name):
    assert subdomain_of(name, production.site.domain) == "gs-x"


def test_an_idna_subdomain_is_taken_alone_or_as_its_fqdn(production):
    assert subdomain_of("xn--bcher-kva.hhdevs.space", production.site.domain) == "xn--bcher-kva"


@pytest.mark.parametrize("name, why", [
    ("gs-x.example.com", "'gs-x.example.com' is not under the configured domain hhdevs.space (site.domain)"),
    ("gs-x.hhdevs.space.example.com", "'gs-x.hhdevs.space.example.com' is not under the configured domain "
                                      "hhdevs.space"),
    ("hhdevs.space", "'hhdevs.space' is the configured domain hhdevs.space (site.domain) itself"),
    ("a.gs-x.hhdevs.space", "'a.gs-x.hhdevs.space' is more than one label under the configured domain"),
])
def test_a_name_outside_the_configured_domain_is_refused_naming_it(production, name, why):
    with pytest.raises(ConfigError) as info:
        subdomain_of(name, production.site.domain)
    assert info.value.message.startswith(f"NAME: {why}")
    assert "hhdevs.space" in info.value.message.split("hint:")[1]


def test_an_fqdn_with_an_invalid_label_names_both(production):
    with pytest.raises(ConfigError) as info:
        subdomain_of("bücher.hhdevs.space", production.site.domain, what="--subdomain")
    assert info.value.message.startswith("--subdomain 'bücher.hhdevs.space': 'bücher' is not ASCII")
    assert "use 'xn--bcher-kva'" in info.value.message


def test_deploy_takes_its_subdomain_as_an_fqdn_too(production, tmp_path):
    from graphsite.usecases.deploy import DeployRequest, choose_subdomain

    request = DeployRequest(source=tmp_path / "report.md", subdomain="GS-X.HHdevs.Space")
    assert choose_subdomain(production, request, clients=None) == "gs-x"
