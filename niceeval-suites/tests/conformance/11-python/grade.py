def get_assert(output, context):
    return {"pass": context["vars"]["word"] in output, "score": 1.0, "reason": "checked"}
