/* rival.c — the names of the one head the heads are compared with (rival.h). */
#include "core/rival.h"

static const RivalName BUILT = {
    .the = "the wide head", .title = "wide head", .panel = "wide head", .label = "wide",
    .top = "the wide head's top key", .too = "the wide head's",
};
static const RivalName TRAINED = {
    .the = "the one head trained on its own", .title = "one head trained on its own", .panel = "one head",
    .label = "alone", .top = "the top key of the one head trained on its own",
    .too = "that of the one head trained on its own",
};

const RivalName *rival_name(int trained) { return trained ? &TRAINED : &BUILT; }
