print("hi2")
