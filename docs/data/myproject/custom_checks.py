"""Custom checks that ``load_checks("myproject.custom_checks")`` registers (README example)."""

from pyspark.sql import functions as F

from cola_core import BaseCheck
from cola_core.registry import register_check


@register_check("lowercase_email")
class LowercaseEmailCheck(BaseCheck):
    """An email must be written in lower case."""

    def violation(self, df):
        column = F.col(self.params["column"])
        return column != F.lower(column)
