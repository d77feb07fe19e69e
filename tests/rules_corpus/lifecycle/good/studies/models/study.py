"""The owner: the model's predicates (a models package after the split)."""


class Study:
    @property
    def is_open(self):
        return self.status == "open"
