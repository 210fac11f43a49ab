"""Which problems a caller sees: a problem version scoped to tenants (``PUT /api/v1/admin/problems`` with
``tenant``) is visible to the keys of those tenants and to operators only; to everyone else (other keys,
anonymous callers, the web pages) it does not exist: 404 in the listing, the detail, Run and Submit,
exactly as an unknown slug."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge.service.ratelimit import Principal

if TYPE_CHECKING:
    from judge.service.state import Services


def is_operator(services: Services, caller: Principal) -> bool:
    operators = services.settings.operator_keys
    return caller.key_name is not None and (caller.key_name in operators or caller.key_id in operators)


def sees(services: Services, caller: Principal, slug: str) -> bool:
    """Whether ``caller`` may see problem ``slug`` (its served version's tenant scope)."""
    return is_operator(services, caller) or services.catalog.visible(slug, caller.tenant)


def known_slugs(services: Services, caller: Principal) -> list[str]:
    """The slugs ``caller`` sees (what a 404 lists as known)."""
    return [p.slug for p in services.catalog if sees(services, caller, p.slug)]
