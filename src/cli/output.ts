// The warning writer lives in the core (src/core never imports src/cli); the commands and the fast entry take it from here.
export {writeWarning} from '../core/text/warning.js'
