import unittest

from layers import layered, merge


class MergeTest(unittest.TestCase):
    def test_nested_settings_are_merged(self) -> None:
        base = {"db": {"host": "localhost", "port": 5432}, "debug": False}
        self.assertEqual(merge(base, {"db": {"port": 6543}}),
                         {"db": {"host": "localhost", "port": 6543}, "debug": False})

    def test_a_value_replaces_a_mapping(self) -> None:
        self.assertEqual(merge({"db": {"host": "a"}}, {"db": "sqlite://"}), {"db": "sqlite://"})

    def test_layers_apply_in_order(self) -> None:
        self.assertEqual(layered({"a": 1}, {"a": 2, "b": 1}, {"b": 3}), {"a": 2, "b": 3})


if __name__ == "__main__":
    unittest.main()
