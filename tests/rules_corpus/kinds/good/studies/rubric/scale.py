"""The owner: a kind's own module names itself."""

KIND = "scale"


class ScaleDimension:
    kind = "scale"

    def read(self, answer):
        if self.kind == "scale":
            return answer.get("choice")
