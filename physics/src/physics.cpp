#include "spindle/physics/physics.h"
