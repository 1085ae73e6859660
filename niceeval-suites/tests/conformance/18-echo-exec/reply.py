import sys
print("pong: " + sys.argv[1])
